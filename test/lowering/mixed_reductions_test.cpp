// Sums and differences whose terms reduce over different variables: a term
// computed into a temporary by a where-statement next to a term indexed by
// the outer variables only. The loop over an outer variable must visit the
// union of both sides' coordinates, whatever the level kinds: each case was
// once a silent wrong result (the loop walked one side's entries only).
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {

// `coo` without the entries whose first coordinate is `residue` modulo 3, so
// that operands disagree on which rows they store.
rt::Coo withoutSlices(const rt::Coo& coo, int residue) {
  rt::Coo kept = rt::Coo::ofShape(coo.dims);
  std::vector<int32_t> coordinate(coo.dims.size());
  for (size_t k = 0; k < coo.nnz(); ++k) {
    if (coo.coords[0][k] % 3 == residue) continue;
    for (size_t mode = 0; mode < coo.dims.size(); ++mode) coordinate[mode] = coo.coords[mode][k];
    kept.push(coordinate.data(), coo.values[k]);
  }
  return kept;
}

rt::Coo sparseWithEmptySlices(std::vector<int32_t> dims, double density, uint64_t seed) {
  return withoutSlices(randomSparse(dims, density, seed), 1);
}
rt::Coo sparseWithOtherEmptySlices(std::vector<int32_t> dims, double density, uint64_t seed) {
  return withoutSlices(randomSparse(dims, density, seed), 2);
}

using Case = ProgramCase;

std::string formats(const std::string& text, const std::map<std::string, std::string>& substitutions) {
  std::string result = text;
  for (const auto& [key, value] : substitutions) {
    for (size_t at = result.find(key); at != std::string::npos; at = result.find(key, at + value.size()))
      result.replace(at, key.size(), value);
  }
  return result;
}

// y(i) = A(i,j) * x(j) + z(i) and its relatives, over the formats of A, z and y.
std::vector<Case> matrixVectorCases() {
  std::vector<Case> cases;
  const std::vector<std::string> matrixFormats = {"csr", "dcsr", "coo", "dense"};
  const std::vector<std::string> vectorFormats = {"dense", "sparse"};
  const std::vector<std::pair<std::string, std::string>> statements = {
    {"plus", "y(i) = A(i, j) * x(j) + z(i)"},
    {"plus_first", "y(i) = z(i) + A(i, j) * x(j)"},
    {"residual", "y(i) = z(i) - A(i, j) * x(j)"},
    {"minus", "y(i) = A(i, j) * x(j) - z(i)"},
    {"scaled", "y(i) = 2 * z(i) - 0.5 * (A(i, j) * x(j))"},
    {"three_terms", "y(i) = A(i, j) * x(j) + z(i) + B(i, k) * w(k)"},
    {"product_of_sum", "y(i) = (A(i, j) * x(j) + z(i)) * u(i)"},
    {"negated", "y(i) = -(A(i, j) * x(j)) - z(i)"},
  };
  uint64_t seed = 100;
  for (const auto& [label, statement] : statements) {
    for (const auto& a : matrixFormats) {
      for (const auto& z : vectorFormats) {
        for (const auto& y : vectorFormats) {
          std::string program = formats(
            "tensor y(I) : @y\ntensor A(I, J) : @A\ntensor x(J) : dense\ntensor z(I) : @z\n"
            "tensor B(I, K) : @A\ntensor w(K) : sparse\ntensor u(I) : @z\n" + statement + "\n",
            {{"@y", y}, {"@A", a}, {"@z", z}});
          std::map<std::string, rt::Coo> inputs = {{"A", sparseWithEmptySlices({29, 17}, 0.2, ++seed)},
                                                   {"x", randomDense({17}, ++seed)},
                                                   {"z", sparseWithOtherEmptySlices({29}, 0.6, ++seed)}};
          if (program.find("B(i, k)") != std::string::npos) {
            inputs.emplace("B", randomSparse({29, 11}, 0.1, ++seed));
            inputs.emplace("w", randomSparse({11}, 0.5, ++seed));
          }
          if (program.find("u(i)") != std::string::npos) inputs.emplace("u", randomSparse({29}, 0.7, ++seed));
          cases.push_back({label + "_A_" + a + "_z_" + z + "_y_" + y, program, inputs});
        }
      }
    }
  }
  return cases;
}

// A(i,j) = B(i,j,k) * c(k) + D(i,j) over the formats of B, D and A.
std::vector<Case> tensorTimesVectorCases() {
  std::vector<Case> cases;
  const std::vector<std::string> tensorFormats = {"csf", "{dense, dense, compressed}", "{dense, compressed, compressed}",
                                                  "coo"};
  const std::vector<std::string> matrixFormats = {"csr", "dcsr", "dense", "csc"};
  const std::vector<std::string> outputFormats = {"dense", "csr", "dcsr"};
  const std::vector<std::pair<std::string, std::string>> statements = {
    {"plus", "A(i, j) = B(i, j, k) * c(k) + D(i, j)"},
    {"minus", "A(i, j) = D(i, j) - B(i, j, k) * c(k)"},
  };
  uint64_t seed = 500;
  for (const auto& [label, statement] : statements) {
    for (const auto& b : tensorFormats) {
      for (const auto& d : matrixFormats) {
        for (const auto& a : outputFormats) {
          // D stored by columns cannot be merged with row-major B in one pass.
          if (d == "csc") continue;
          std::string program = formats("tensor A(I, J) : @A\ntensor B(I, J, K) : @B\ntensor c(K) : dense\n"
                                        "tensor D(I, J) : @D\n" + statement + "\n",
                                        {{"@A", a}, {"@B", b}, {"@D", d}});
          std::string safe = b;
          for (char& ch : safe)
            if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
          cases.push_back({label + "_B_" + safe + "_D_" + d + "_A_" + a, program,
                           {{"B", sparseWithEmptySlices({13, 11, 7}, 0.15, ++seed)},
                            {"c", randomDense({7}, ++seed)},
                            {"D", sparseWithOtherEmptySlices({13, 11}, 0.3, ++seed)}}});
        }
      }
    }
  }
  return cases;
}

// Scalars, schedules on top, and several producers under one loop.
std::vector<Case> otherCases() {
  std::vector<Case> cases;
  auto vectorInputs = [](uint64_t seed) {
    return std::map<std::string, rt::Coo>{{"A", sparseWithEmptySlices({41, 23}, 0.15, seed)},
                                          {"x", randomDense({23}, seed + 1)},
                                          {"z", sparseWithOtherEmptySlices({41}, 0.5, seed + 2)}};
  };
  cases.push_back({"scalar_result",
                   "tensor s : dense\ntensor A(I, J) : dcsr\ntensor x(J) : dense\ntensor z(I) : sparse\n"
                   "s = A(i, j) * x(j) + z(i)\n",
                   vectorInputs(900)});
  cases.push_back({"two_reductions_sparse_rows",
                   "tensor y(I) : sparse\ntensor A(I, J) : dcsr\ntensor x(J) : dense\ntensor B(I, K) : dcsr\n"
                   "tensor w(K) : dense\ny(i) = A(i, j) * x(j) - B(i, k) * w(k)\n",
                   {{"A", sparseWithEmptySlices({31, 19}, 0.2, 930)},
                    {"x", randomDense({19}, 931)},
                    {"B", sparseWithOtherEmptySlices({31, 13}, 0.2, 932)},
                    {"w", randomDense({13}, 933)}}});
  cases.push_back({"matrix_plus_reduced_tensor_sparse_output",
                   "tensor A(I, J) : dcsr\ntensor B(I, J, K) : csf\ntensor c(K) : sparse\ntensor D(I, J) : dcsr\n"
                   "A(i, j) = D(i, j) + B(i, j, k) * c(k) - 3 * D(i, j)\n",
                   {{"B", sparseWithEmptySlices({9, 8, 12}, 0.2, 940)},
                    {"c", randomSparse({12}, 0.5, 941)},
                    {"D", sparseWithOtherEmptySlices({9, 8}, 0.3, 942)}}});
  return cases;
}

class MixedReductions : public ::testing::TestWithParam<Case> {};

TEST_P(MixedReductions, MatchReference) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.program);
  expectProgramMatchesReference(c.program, c.inputs);
}

// Schedules of statements whose terms reduce over different variables
// schedule the loops around each term's sum (nested_sum_schedules_test.cpp).
TEST(MixedReductionsScheduled, MatchReference) {
  std::string program = "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor z(I) : dense\n"
                        "y(i) = A(i, j) * x(j) + z(i)\n";
  for (const char* schedule : {"split(i, i0, i1, 8)", "parallelize(i, CPUThread, NoRaces)"}) {
    SCOPED_TRACE(schedule);
    expectProgramMatchesReference(withSchedule(program, schedule), {{"A", randomSparse({29, 17}, 0.2, 970)},
                                                                    {"x", randomDense({17}, 971)},
                                                                    {"z", randomDense({29}, 972)}});
  }
}

// The same on a real matrix: every row of z survives where A stores nothing.
TEST(MixedReductionsReal, ResidualOnRealMatrix) {
  rt::Coo a = realMatrix("bcsstk01.mtx");
  int32_t n = a.dims[0];
  expectProgramMatchesReference("tensor r(I) : dense\ntensor A(I, J) : dcsr\ntensor x(J) : dense\ntensor b(I) : sparse\n"
                                "r(i) = b(i) - A(i, j) * x(j)\n",
                                {{"A", withoutSlices(a, 1)},
                                 {"x", randomDense({n}, 950)},
                                 {"b", randomSparse({n}, 0.3, 951)}});
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(MatrixVector, MixedReductions, ::testing::ValuesIn(matrixVectorCases()), caseName);
INSTANTIATE_TEST_SUITE_P(TensorTimesVector, MixedReductions, ::testing::ValuesIn(tensorTimesVectorCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Other, MixedReductions, ::testing::ValuesIn(otherCases()), caseName);

}  // namespace
}  // namespace tcc::test
