// The GPU tests' side of the dense reference: inputs bound with their
// dense copies, a tensor as the evaluator's array, and a GPU result
// compared with the evaluator's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tcc/runtime/random.h"
#include "tcc/runtime/value_type.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::test {

inline DenseArray denseOf(const rt::Coo& coo) {
  DenseArray array;
  array.dims.assign(coo.dims.begin(), coo.dims.end());
  array.values = rt::toDense(coo);
  return array;
}

// The dimensions of `tensor`, by the sizes of their symbols.
inline std::vector<int32_t> dimsOf(const TensorVar& tensor, const std::map<std::string, int32_t>& sizes) {
  std::vector<int32_t> dims;
  for (int mode = 0; mode < tensor.order(); ++mode) dims.push_back(sizes.at(tensor.dimension(mode).symbol()));
  return dims;
}

// A real matrix of the shared data (a Matrix Market file name); its shape
// sets I and J in `sizes`.
inline rt::Coo realMatrix(const std::string& file, std::map<std::string, int32_t>& sizes) {
  rt::Coo matrix = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + file);
  sizes["I"] = matrix.dims[0];
  sizes["J"] = matrix.dims[1];
  return matrix;
}

// `all` without the entries `dropped` picks by their coordinates (holes in
// random inputs: empty rows, bands).
inline rt::Coo withoutEntries(const rt::Coo& all, const std::function<bool(const std::vector<int32_t>&)>& dropped) {
  rt::Coo kept = rt::Coo::ofShape(all.dims);
  std::vector<int32_t> coordinate(all.dims.size());
  for (size_t k = 0; k < all.nnz(); ++k) {
    for (size_t mode = 0; mode < all.dims.size(); ++mode) coordinate[mode] = all.coords[mode][k];
    if (!dropped(coordinate)) kept.push(coordinate.data(), all.values[k]);
  }
  return kept;
}

// A rows x cols matrix of `density`, every `emptyEvery`-th row empty, and
// row `longRow` (when not negative) holding every column.
inline rt::Coo drawnMatrix(int32_t rows, int32_t cols, double density, int emptyEvery, int32_t longRow,
                           uint64_t seed) {
  rt::Coo all = rt::randomUniform({rows, cols}, density, seed);
  rt::Coo kept = withoutEntries(all, [&](const std::vector<int32_t>& c) {
    return (emptyEvery > 0 && c[0] % emptyEvery == 0) || c[0] == longRow;
  });
  for (int32_t column = 0; longRow >= 0 && column < cols; ++column) {
    int32_t coordinate[2] = {longRow, column};
    kept.push(coordinate, 0.25 + (column % 7) * 0.125);
  }
  return kept;
}

// Values a tensor of `type` holds: a float16 input (a real matrix's
// values, say) goes through rt::heldByFloat16.
inline rt::Coo heldBy(ir::Datatype type, rt::Coo entries) {
  if (type == ir::Datatype::Float16) entries.values = rt::heldByFloat16(std::move(entries.values));
  return entries;
}

// C = A B summed over A's stored entries (`a` as the kernel reads it: its
// packed values unpacked), B row-major with `columns` columns.
inline std::vector<double> sumsOverNonzeros(const rt::Coo& a, const DenseArray& b, int32_t columns) {
  std::vector<double> c(size_t(a.dims[0]) * columns, 0.0);
  for (size_t e = 0; e < a.nnz(); ++e)
    for (int32_t k = 0; k < columns; ++k)
      c[size_t(a.coords[0][e]) * columns + k] += a.values[e] * b.values[size_t(a.coords[1][e]) * columns + k];
  return c;
}

// Inputs by name, packed in the formats their tensors declare, and their
// dense copies for the reference.
struct BoundInputs {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, DenseArray> dense;

  // An integer tensor takes whole values from -9 to 9 other than 0, each
  // drawn from the entry's value (values in [0, 1) would all truncate to 0).
  void bind(const TensorVar& tensor, const rt::Coo& entries) {
    rt::Coo values = heldBy(tensor.datatype(), entries);
    if (!ir::isFloat(tensor.datatype()))
      for (double& value : values.values) {
        double drawn = std::fmod(std::floor(std::abs(value) * 1000), 18);
        value = drawn < 9 ? drawn - 9 : drawn - 8;
      }
    tensors.emplace(tensor.name(),
                    rt::pack(values, toRuntimeFormat(tensor.format()), toRuntimeType(tensor.datatype())));
    // The reference sees the values the kernel sees (rounded to float32).
    dense.emplace(tensor.name(), denseOf(rt::unpack(tensors.at(tensor.name()))));
  }
};

// What the dense reference computes for `output` from `inputs`.
inline std::vector<double> referenceOf(const Program& program, const BoundInputs& inputs, const TensorVar& output) {
  return evaluate(program.statements(), inputs.dense).at(output.name()).values;
}

inline bool anyNonZero(const std::vector<double>& values) {
  return std::any_of(values.begin(), values.end(), [](double v) { return v != 0; });
}

// How close a result must come to the reference, by its element type.
inline double toleranceOf(const TensorVar& output) {
  return output.datatype() == ir::Datatype::Float32 ? 2e-4 : 1e-10;
}

// Expects `actual` within `tolerance` of `expected`, relative to the
// largest expected magnitude (at least 1); the first five mismatches are
// reported, prefixed by `what`. Returns how many were reported.
inline int expectClose(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance,
                       const std::string& what) {
  EXPECT_EQ(actual.size(), expected.size()) << what;
  if (actual.size() != expected.size()) return 1;
  double scale = 1;
  for (double v : expected) scale = std::max(scale, std::abs(v));
  int mismatches = 0;
  for (size_t k = 0; k < actual.size() && mismatches < 5; ++k) {
    if (std::abs(actual[k] - expected[k]) > tolerance * scale) {
      ++mismatches;
      ADD_FAILURE() << what << ": entry " << k << " is " << actual[k] << ", expected " << expected[k];
    }
  }
  return mismatches;
}

}  // namespace tcc::test
