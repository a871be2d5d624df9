// Shared by the CPU benches that compare tcc with its peers on the same
// inputs: seeded dense operands and the real matrices of the shared data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tcc/tcc.h"

// `count` values uniform in [-1, 1] from `seed`.
inline std::vector<double> randomValues(size_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> values(count);
  for (double& v : values) v = value(random);
  return values;
}

// A dense tensor of shape `dims` holding `values` in row-major order.
inline tcc::rt::Coo denseCoo(std::vector<int32_t> dims, const double* values) {
  tcc::rt::Coo coo = tcc::rt::Coo::ofShape(dims);
  int64_t size = 1;
  for (int32_t d : dims) size *= d;
  std::vector<int32_t> coordinate(dims.size());
  for (int64_t p = 0; p < size; ++p) {
    int64_t rest = p;
    for (int m = static_cast<int>(dims.size()) - 1; m >= 0; --m) {
      coordinate[m] = static_cast<int32_t>(rest % dims[m]);
      rest /= dims[m];
    }
    coo.push(coordinate.data(), values[p]);
  }
  return coo;
}

// A dense tensor of random values from `seed`.
inline tcc::rt::Coo denseCoo(std::vector<int32_t> dims, uint64_t seed) {
  int64_t size = 1;
  for (int32_t d : dims) size *= d;
  return denseCoo(std::move(dims), randomValues(static_cast<size_t>(size), seed).data());
}

// The shared data's matrix `name`, sorted, with every value of a pattern
// matrix set to a seeded nonzero so that it is not all ones (integer ones
// stay as read).
inline tcc::rt::Coo readMatrix(const std::string& name) {
  tcc::rt::Coo coo = tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
  bool allOnes = std::all_of(coo.values.begin(), coo.values.end(), [](double v) { return v == 1; });
  if (allOnes) {
    auto values = randomValues(coo.nnz(), 7);
    for (size_t k = 0; k < coo.nnz(); ++k) coo.values[k] = values[k] >= 0 ? values[k] + 0.1 : values[k] - 0.1;
  }
  coo.sort();
  return coo;
}

// `coos` packed in the formats `program` declares for them.
inline std::map<std::string, tcc::Tensor> packedFor(const tcc::Program& program,
                                                     const std::map<std::string, tcc::rt::Coo>& coos) {
  std::map<std::string, tcc::Tensor> packed;
  for (const auto& [name, coo] : coos)
    packed.emplace(name, tcc::rt::pack(coo, tcc::toRuntimeFormat(program.syntax().findTensor(name)->format())));
  return packed;
}

inline std::map<std::string, tcc::Tensor> packedFor(const std::string& program,
                                                     const std::map<std::string, tcc::rt::Coo>& coos) {
  return packedFor(tcc::Program::fromText(program, "bench.tc"), coos);
}

inline tcc::rt::Coo transposed(const tcc::rt::Coo& a) {
  tcc::rt::Coo t = tcc::rt::Coo::ofShape({a.dims[1], a.dims[0]});
  for (size_t k = 0; k < a.nnz(); ++k) {
    int32_t coordinate[2] = {a.coords[1][k], a.coords[0][k]};
    t.push(coordinate, a.values[k]);
  }
  t.sort();
  return t;
}
