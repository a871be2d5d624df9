// A permanent laid out for the GPU kernels: Nijenhuis and Wilf's Gray-code
// Ryser (gray_code_ryser.h) over a chosen order of the columns (column c is
// bit c of the Gray code; the last column is folded into x's start and never
// flips) and of the rows (row i is x_i), and, for CodeGen-Hybrid, how many
// of the first columns and rows stay in registers.
//
// Elbek and Kaya's two orders:
//  - degree sort (the CPU kernel's, GPU-SparsePerman's and CodeGen-PureReg's):
//    columns by ascending nonzero count, rows as they are;
//  - permanent ordering (Algorithm 3, CodeGen-Hybrid's): repeatedly take the
//    column with the fewest nonzeros on rows not yet ordered, and order
//    those rows next. The first k columns then touch only the first r_k
//    rows, with r_k small for small k: column c flips at every 2^(c+1)-th
//    step, so those rows' sums change almost every step and the others
//    rarely.
// Partitioning (Algorithm 4) picks k, the columns whose flips touch only
// registers: x_0..x_{r_k - 1} live in registers, the other rows in global
// memory, read and written only when a column >= k flips (2^-k of the steps).
#pragma once

#include <cstdint>
#include <vector>

#include "../permanent_matrix.h"

namespace tcc::rt::permanent::gpu {

struct RyserProblem {
  int n = 0;
  // CSC of the reordered matrix: column c holds its rows (renumbered) and values.
  std::vector<int32_t> columnStart, rows;
  std::vector<double> values;
  // x at g = 0: a_{i,n-1} - (1/2) sum_j a_ij, per renumbered row.
  std::vector<double> start;
  // columnOf[c]: the SortedColumnMatrix column that is column c here;
  // rowOf[i]: the input row that is row i here.
  std::vector<int> columnOf, rowOf;

  int columnSize(int column) const { return columnStart[column + 1] - columnStart[column]; }
  // Rows 0..r-1 touched by columns 0..k-1 hold every row they touch: the
  // smallest r such that columns 0..k-1 touch no row >= r.
  int rowsTouchedBy(int columns) const;
};

// Columns and rows as the SortedColumnMatrix has them (degree sort).
RyserProblem degreeSortedProblem(const SortedColumnMatrix& matrix);

struct Ordering {
  std::vector<int> columns;  // columns[c]: the SortedColumnMatrix column placed c-th
  std::vector<int> rows;     // rows[i]: the row placed i-th
};

// Algorithm 3 (permanent ordering). Ties go to the column with fewer
// nonzeros in all, then to the lower index.
Ordering permanentOrdering(const SortedColumnMatrix& matrix);
RyserProblem orderedProblem(const SortedColumnMatrix& matrix, const Ordering& ordering);

// Algorithm 4's cost model. Per Gray-code step, a kernel with k register
// columns over r_k register rows multiplies r_k register row sums (and the
// global part's product), and with probability 2^-k a column >= k flips:
// then it updates that column's global entries and multiplies the n - r_k
// global row sums again, each a global access worth `globalAccessCost`
// register operations. The register rows cost 2 registers each (float64),
// on top of `baseRegisters`, which sets how many threads an SM holds. The
// score of k is resident threads per SM over the cost of a step; the
// partition takes the best k.
//
// With `unroll` >= 2 the kernel keeps, within each aligned block of unroll
// steps, the product of the register rows that the block's columns
// (< log2 unroll) do not touch: a step then multiplies only the rows those
// columns touch, and the rest once per block.
//
// With `sliceBits` < 64 each thread runs at most 2^sliceBits steps, so only
// columns < sliceBits flip in its loop: the global rows only later columns
// touch are read once per thread, and cost nothing per step.
struct CostModel {
  double globalAccessCost = 8;
  int unroll = 1;
  int sliceBits = 64;
  int baseRegisters = 32;
  int registersPerMultiprocessor = 65536;
  int maxThreadsPerMultiprocessor = 2048;
  int registerAllocationUnit = 8;  // registers per thread are allocated in steps of this
};

struct Partition {
  int registerColumns = 0;  // k
  int registerRows = 0;     // r_k
  int estimatedRegisters = 0;
  int estimatedThreadsPerMultiprocessor = 0;
  double stepCost = 0;
  double score = 0;
};

// The model's numbers for one k.
Partition evaluatePartition(const RyserProblem& problem, int registerColumns, const CostModel& model);
// Algorithm 4: the k in [1, n-1] with the best score (n >= 2).
Partition partitionRegisters(const RyserProblem& problem, const CostModel& model);

}  // namespace tcc::rt::permanent::gpu
