#include "ryser_problem.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace tcc::rt::permanent::gpu {
namespace {

// The problem for a given order of columns and rows.
RyserProblem buildProblem(const SortedColumnMatrix& matrix, const std::vector<int>& columns,
                          const std::vector<int>& rows) {
  const int n = matrix.n;
  RyserProblem problem;
  problem.n = n;
  problem.columnOf = columns;
  problem.rowOf = rows;
  std::vector<int> newRow(n);
  for (int i = 0; i < n; ++i) newRow[rows[i]] = i;
  problem.start.assign(n, 0.0);
  problem.columnStart.push_back(0);
  for (int c = 0; c < n; ++c) {
    const int source = columns[c];
    std::vector<std::pair<int32_t, double>> entries;
    for (int32_t k = matrix.columnStart[source]; k < matrix.columnStart[source + 1]; ++k)
      entries.emplace_back(newRow[matrix.rows[k]], matrix.values[k]);
    std::sort(entries.begin(), entries.end());
    for (const auto& [row, value] : entries) {
      problem.rows.push_back(row);
      problem.values.push_back(value);
      problem.start[row] += c == n - 1 ? 0.5 * value : -0.5 * value;
    }
    problem.columnStart.push_back(static_cast<int32_t>(problem.rows.size()));
  }
  return problem;
}

}  // namespace

int RyserProblem::rowsTouchedBy(int columns) const {
  int rowCount = 0;
  for (int32_t k = 0; k < columnStart[columns]; ++k) rowCount = std::max(rowCount, rows[k] + 1);
  return rowCount;
}

RyserProblem degreeSortedProblem(const SortedColumnMatrix& matrix) {
  std::vector<int> identity(matrix.n);
  std::iota(identity.begin(), identity.end(), 0);
  return buildProblem(matrix, identity, identity);
}

Ordering permanentOrdering(const SortedColumnMatrix& matrix) {
  const int n = matrix.n;
  // The rows of each column, and the columns of each row.
  std::vector<std::vector<int>> columnsOfRow(n);
  for (int c = 0; c < n; ++c)
    for (int32_t k = matrix.columnStart[c]; k < matrix.columnStart[c + 1]; ++k) columnsOfRow[matrix.rows[k]].push_back(c);
  std::vector<int> unorderedCount(n);  // nonzeros of each column on rows not yet ordered
  for (int c = 0; c < n; ++c) unorderedCount[c] = static_cast<int>(matrix.columnSize(c));
  std::vector<char> columnDone(n, 0), rowDone(n, 0);
  Ordering ordering;
  for (int step = 0; step < n; ++step) {
    int best = -1;
    for (int c = 0; c < n; ++c) {
      if (columnDone[c]) continue;
      if (best < 0 || unorderedCount[c] < unorderedCount[best] ||
          (unorderedCount[c] == unorderedCount[best] && matrix.columnSize(c) < matrix.columnSize(best)))
        best = c;
    }
    columnDone[best] = 1;
    ordering.columns.push_back(best);
    for (int32_t k = matrix.columnStart[best]; k < matrix.columnStart[best + 1]; ++k) {
      const int row = matrix.rows[k];
      if (rowDone[row]) continue;
      rowDone[row] = 1;
      ordering.rows.push_back(row);
      for (int c : columnsOfRow[row]) --unorderedCount[c];
    }
  }
  for (int row = 0; row < n; ++row)  // rows with no nonzero (no perfect matching: not computed anyway)
    if (!rowDone[row]) ordering.rows.push_back(row);
  return ordering;
}

RyserProblem orderedProblem(const SortedColumnMatrix& matrix, const Ordering& ordering) {
  return buildProblem(matrix, ordering.columns, ordering.rows);
}

Partition evaluatePartition(const RyserProblem& problem, int registerColumns, const CostModel& model) {
  const int n = problem.n;
  Partition partition;
  partition.registerColumns = registerColumns;
  partition.registerRows = problem.rowsTouchedBy(registerColumns);
  // Columns k.. that flip inside a thread's slice: each flip updates its
  // global entries and multiplies the global rows those columns touch.
  const int flipping = std::min(n - 1, model.sliceBits);
  const int liveRows = std::max(partition.registerRows, flipping > 0 ? problem.rowsTouchedBy(flipping) : 0);
  const int globalRows = liveRows - partition.registerRows;
  double globalUpdates = 0, globalFlip = 0;
  for (int c = registerColumns; c < flipping; ++c) {
    int entries = 0;
    for (int32_t k = problem.columnStart[c]; k < problem.columnStart[c + 1]; ++k)
      entries += problem.rows[k] >= partition.registerRows;
    globalUpdates += std::ldexp(entries, -(c + 1));
    if (entries > 0) globalFlip += std::ldexp(1.0, -(c + 1));
  }
  double registerWork = partition.registerRows;
  if (model.unroll >= 2) {
    const int frequent = problem.rowsTouchedBy(std::countr_zero(static_cast<unsigned>(model.unroll)));
    if (frequent < partition.registerRows)
      registerWork = frequent + double(partition.registerRows - frequent) / model.unroll;
  }
  partition.stepCost = registerWork + 1 + model.globalAccessCost * (2 * globalUpdates + globalFlip * globalRows);
  const int unit = model.registerAllocationUnit;
  partition.estimatedRegisters = std::min(255, (model.baseRegisters + 2 * partition.registerRows + unit - 1) / unit * unit);
  const int warps = model.registersPerMultiprocessor / (partition.estimatedRegisters * 32);
  partition.estimatedThreadsPerMultiprocessor = std::min(model.maxThreadsPerMultiprocessor, warps * 32);
  partition.score = partition.estimatedThreadsPerMultiprocessor / partition.stepCost;
  return partition;
}

Partition partitionRegisters(const RyserProblem& problem, const CostModel& model) {
  Partition best = evaluatePartition(problem, 1, model);
  for (int k = 2; k < problem.n; ++k) {
    Partition candidate = evaluatePartition(problem, k, model);
    if (candidate.score > best.score) best = candidate;
  }
  return best;
}

}  // namespace tcc::rt::permanent::gpu
