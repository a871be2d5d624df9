// The statements and inputs of the lane-sliced rows tests (a CSR output's
// rows on GPU warps, each row's columns cut among the warp's lanes), shared
// by the serial check and the GPU one: rows built to break the slices.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "dense_of.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

namespace tcc::test {

struct LaneSlicedStatement {
  std::string name;
  std::string dsl;  // declarations and the statement, no schedule
};

// (gtest names a failing case by its statement's name.)
inline void PrintTo(const LaneSlicedStatement& statement, std::ostream* out) { *out << statement.name; }

inline const std::vector<LaneSlicedStatement> kLaneSlicedStatements{
    {"Union", "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nY(i, j) = A(i, j) + B(i, j)\n"},
    {"Intersection",
     "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nY(i, j) = A(i, j) * B(i, j)\n"},
    {"UnionOfThree", "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\n"
                     "Y(i, j) = A(i, j) + B(i, j) - C(i, j)\n"},
    {"IntersectionInAUnionOfThree",
     "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\n"
     "Y(i, j) = A(i, j) * B(i, j) + C(i, j)\n"},
    {"IntersectionOfThree", "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n"
                            "tensor C(I, J) : csr\nY(i, j) = A(i, j) * B(i, j) * C(i, j)\n"},
    {"Scaled", "tensor Y(I, J) : csr\ntensor A(I, J) : csr\nY(i, j) = 2 * A(i, j)\n"},
    {"TimesDense", "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor D(I, J) : dense\n"
                   "Y(i, j) = A(i, j) * D(i, j)\n"},
};

inline std::string laneSliced(const std::string& dsl) {
  return dsl + "schedule {\nparallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, NoRaces)\n}\n";
}

inline std::string rowPerThread(const std::string& dsl) {
  return dsl + "schedule {\nparallelize(i, GPUThread, NoRaces)\n}\n";
}

// How each sparse operand's rows are drawn.
enum class RowShapes {
  Mixed,          // empty rows, rows of one entry, banded, skewed and random rows, one row of most columns
  Disjoint,       // each operand's rows in columns of its own (their intersection is empty)
  AlternateRows,  // A on even rows, the others on odd ones (A and C share none: a union's rows from one operand)
  Real,           // A a real matrix, the others random around it
};

struct LaneSlicedCase {
  std::string name;
  int32_t rows = 0, columns = 0;
  RowShapes shapes = RowShapes::Mixed;
  std::string realMatrix;
};

inline std::vector<LaneSlicedCase> laneSlicedCases() {
  return {{"mixed rows", 230, 3000, RowShapes::Mixed},
          {"a row of a single column", 3, 1, RowShapes::Mixed},
          {"rows that do not overlap", 70, 500, RowShapes::Disjoint},
          {"operands on alternate rows", 90, 400, RowShapes::AlternateRows},
          {"adder_dcop_05", 0, 0, RowShapes::Real, "adder_dcop_05.mtx"},
          {"bcsstk13", 0, 0, RowShapes::Real, "bcsstk13.mtx"}};
}

// Operand `k` (0 for A) of `dims`, drawn as `shapes` says.
inline rt::Coo laneSlicedOperand(const std::vector<int32_t>& dims, RowShapes shapes, int k, uint64_t seed) {
  const int32_t rows = dims[0], columns = dims[1];
  rt::Coo entries = rt::Coo::ofShape(dims);
  std::vector<bool> taken(static_cast<size_t>(columns));
  uint64_t state = seed * 2654435761u + 12345;
  auto next = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  auto value = [&]() { return 0.5 + (next() % 1000) / 1000.0; };
  for (int32_t r = 0; r < rows; ++r) {
    std::fill(taken.begin(), taken.end(), false);
    auto put = [&](int32_t c) {
      if (c < 0 || c >= columns || taken[c]) return;
      taken[c] = true;
    };
    switch (shapes) {
      case RowShapes::Mixed:
        if (r == rows / 2) {
          // A very long row: most columns (every operand a different most).
          for (int32_t c = 0; c < columns; ++c)
            if ((c + k) % 4 != 0) put(c);
          break;
        }
        switch (r % 6) {
          case 0: break;                                           // empty
          case 1: put((r * 37 + k) % columns); break;              // one entry
          case 2:                                                   // banded
            for (int32_t c = r - 20 + k; c <= r + 20; ++c) put(c);
            break;
          case 3:  // skewed: a dense cluster at the start, a few far off
            for (int32_t c = 0; c < 60; ++c) put(c + k);
            for (int32_t c = columns - 3; c < columns; ++c) put(c);
            break;
          case 4:  // one entry at each end
            put(k);
            put(columns - 1 - k);
            break;
          default:  // random, some 5%
            for (int32_t c = 0; c < columns; ++c)
              if (next() % 100 < 5) put(c);
        }
        break;
      case RowShapes::Disjoint:
        // Operand k's columns: those c with c % 3 == k.
        for (int32_t c = k; c < columns; c += 3)
          if (next() % 100 < 40) put(c);
        break;
      case RowShapes::AlternateRows:
        if ((r % 2 == 0) == (k % 2 == 0))
          for (int32_t c = 0; c < columns; ++c)
            if (next() % 100 < 30) put(c);
        break;
      case RowShapes::Real:
        // Around the real A: half its row's columns and some random ones.
        for (int32_t c = 0; c < columns; ++c)
          if (next() % 1000 < 3) put(c);
        break;
    }
    for (int32_t c = 0; c < columns; ++c)
      if (taken[c]) {
        int32_t at[2] = {r, c};
        entries.push(at, value());
      }
  }
  return entries;
}

// Every input of `statement` bound for `drawn`: the sparse ones drawn as
// its shapes say (A the real matrix where it names one, the others around
// A's entries and at random), the dense ones full.
inline BoundInputs bindLaneSlicedInputs(const CompiledStatement& statement, LaneSlicedCase& drawn) {
  std::optional<rt::Coo> matrix;
  if (!drawn.realMatrix.empty()) {
    std::map<std::string, int32_t> sizes;
    matrix = realMatrix(drawn.realMatrix, sizes);
    drawn.rows = sizes.at("I");
    drawn.columns = sizes.at("J");
  }
  std::vector<int32_t> dims{drawn.rows, drawn.columns};
  BoundInputs inputs;
  int k = 0;
  for (const TensorVar& parameter : statement.parameters) {
    if (parameter == statement.computedOutput) continue;
    if (parameter.format().isAllDense()) {
      inputs.bind(parameter, rt::randomUniform(dims, 1.0, 77));
      continue;
    }
    rt::Coo entries;
    if (matrix && parameter.name() == "A") {
      entries = *matrix;
    } else if (matrix) {
      // Half of A's entries (the intersections meet) and some at random.
      entries = laneSlicedOperand(dims, drawn.shapes, k, 31 + k);
      for (size_t e = 0; e < matrix->nnz(); e += 2) {
        int32_t at[2] = {matrix->coords[0][e], matrix->coords[1][e]};
        entries.push(at, 1.0 + k);
      }
      entries.sort();
      rt::Coo unique = rt::Coo::ofShape(dims);
      for (size_t e = 0; e < entries.nnz(); ++e) {
        if (e > 0 && entries.coords[0][e] == entries.coords[0][e - 1] &&
            entries.coords[1][e] == entries.coords[1][e - 1])
          continue;
        int32_t at[2] = {entries.coords[0][e], entries.coords[1][e]};
        unique.push(at, entries.values[e]);
      }
      entries = unique;
    } else {
      entries = laneSlicedOperand(dims, drawn.shapes, k, 31 + k);
    }
    inputs.bind(parameter, entries);
    ++k;
  }
  return inputs;
}

}  // namespace tcc::test
