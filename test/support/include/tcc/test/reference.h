// The dense reference evaluator: obviously-right nested loops over every
// index variable's full range, in double precision. Tests compare compiled
// kernels against it. It reads tensor index notation (einsum with implicit
// summation, explicit sum, +=, scalars) and concrete index notation
// (forall, where, sequence, multi), statement after statement, so a later
// statement may read an earlier one's output.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tcc/ir/index_stmt.h"

namespace tcc::test {

struct DenseArray {
  std::vector<int64_t> dims;   // empty for a scalar
  std::vector<double> values;  // row-major over modes in declaration order

  static DenseArray zeros(std::vector<int64_t> dims);
  int order() const { return static_cast<int>(dims.size()); }
  int64_t size() const;  // product of dims; 1 for a scalar
  // Throws std::out_of_range for a wrong count or a coordinate out of range.
  double& at(std::span<const int64_t> coordinates);
  double at(std::span<const int64_t> coordinates) const;
  double& at(std::initializer_list<int64_t> coordinates) { return at(std::span(coordinates.begin(), coordinates.size())); }
  double at(std::initializer_list<int64_t> coordinates) const {
    return at(std::span(coordinates.begin(), coordinates.size()));
  }
};

// Evaluates `statements` in order. Tensors are matched to `inputs` by name;
// every tensor written that is not an input starts at zero, and a tensor
// written by the producer of a where is reset to zero each time the where
// runs. Sizes come from the inputs' dims and the tensors' fixed or shared
// symbolic dimensions; an index variable bound to two different sizes, an
// index variable or output mode whose size nothing determines, or an input
// whose dims contradict its declaration throws std::invalid_argument.
// Provenance relations (scheduled CIN) are not supported: evaluate the
// unscheduled statement instead. Returns every tensor, inputs included.
std::map<std::string, DenseArray> evaluate(const std::vector<ir::IndexStmt>& statements,
                                           std::map<std::string, DenseArray> inputs);

// The permanent of a square row-major matrix by Ryser's formula with Gray
// code order: O(2^n n). perm of the 0 x 0 matrix is 1.
double permanent(const DenseArray& matrix);

// The permanent by its definition, the sum over all n! permutations of
// prod_i a_{i,sigma(i)}: an oracle independent of Ryser's formula, for
// n <= 10.
double permanentByPermutations(const DenseArray& matrix);

}  // namespace tcc::test
