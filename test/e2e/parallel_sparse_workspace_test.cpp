// Scattering statements with a thread loop in their producer: one sparse
// workspace per thread, merged in parallel. `tcc run` at 1, 2, 3, 7 and 16
// threads must give what the serial kernel and the dense reference give.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "reference_check.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "tcc/runtime/tensor_file.h"

namespace tcc::e2e {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string name;
  friend void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }
  std::string program;   // without a schedule
  std::string schedule;  // the parallel one
  std::map<std::string, rt::Coo> inputs;
  // Whether the threads own ranges of the output's first level (explain says
  // so), or merge their overlapping per-thread workspaces.
  bool ownedRanges = false;
};

rt::Coo random(std::vector<int32_t> dims, double density, uint64_t seed) {
  return rt::randomUniform(dims, density, seed);
}

// `base` with the rows `full` holding every column (value 1 + row / 100):
// rows with far more products than the others.
rt::Coo withFullRows(rt::Coo base, const std::vector<int32_t>& full) {
  for (int32_t row : full)
    for (int32_t column = 0; column < base.dims[1]; ++column) {
      int32_t coordinate[2] = {row, column};
      base.push(coordinate, 1.0 + row / 100.0);
    }
  // Drop the duplicates the full rows made, keeping the first of each.
  base.sort();
  rt::Coo unique = rt::Coo::ofShape(base.dims);
  for (size_t k = 0; k < base.nnz(); ++k) {
    if (k > 0 && base.coords[0][k] == base.coords[0][k - 1] && base.coords[1][k] == base.coords[1][k - 1]) continue;
    int32_t coordinate[2] = {base.coords[0][k], base.coords[1][k]};
    unique.push(coordinate, base.values[k]);
  }
  return unique;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  rt::Coo real = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/bcspwr03.mtx");
  rt::Coo fs183 = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/fs_183_1.mtx");
  all.push_back({"outer_product_spgemm",
                 "tensor A(I, J) : csr\ntensor B(I, K) : csc\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n",
                 "parallelize(k, CPUThread, NoRaces)", {{"B", real}, {"C", real}}, true});
  // The owned rows cut a dense loop instead of a compressed segment.
  all.push_back({"outer_product_dense_columns",
                 "tensor A(I, J) : dcsr\ntensor B(I, K) : {dense, dense} order (1,0)\ntensor C(K, J) : csr\n"
                 "A(i, j) = B(i, k) * C(k, j)\n",
                 "reorder(k, i, j)\n  parallelize(k, CPUThread, Workspace)",
                 {{"B", random({45, 12}, 1.0, 12)}, {"C", random({12, 40}, 0.15, 13)}}, true});
  // Owned ranges cut by work: two rows carry most of the products (so
  // ranges next to them are empty or hold one row), or one row carries all
  // of them, or there are fewer rows than ranges (4 a thread).
  const std::string outerProduct =
    "tensor A(I, J) : csr\ntensor B(I, K) : csc\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n";
  all.push_back({"outer_product_skewed_rows", outerProduct, "parallelize(k, CPUThread, NoRaces)",
                 {{"B", withFullRows(random({200, 150}, 0.01, 30), {3, 137})}, {"C", random({150, 120}, 0.05, 31)}},
                 true});
  all.push_back({"outer_product_one_row_has_all_work", outerProduct, "parallelize(k, CPUThread, NoRaces)",
                 {{"B", withFullRows(rt::Coo::ofShape({100, 60}), {99})}, {"C", random({60, 80}, 0.1, 32)}}, true});
  all.push_back({"outer_product_fewer_rows_than_ranges", outerProduct, "parallelize(k, CPUThread, NoRaces)",
                 {{"B", random({3, 40}, 0.5, 33)}, {"C", random({40, 50}, 0.2, 34)}}, true});
  all.push_back({"transposed_spgemm",
                 "tensor A(J, I) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(j, i) = B(i, k) * C(k, j)\n",
                 "parallelize(i, CPUThread, NoRaces)",
                 {{"B", random({300, 200}, 0.02, 1)}, {"C", random({200, 250}, 0.02, 2)}}});
  all.push_back({"sp_mttkrp",
                 "tensor A(I, J) : dcsr\ntensor B(K, L, I) : csf\ntensor C(K, J) : dense\ntensor D(L, J) : dense\n"
                 "A(i, j) = B(k, l, i) * C(k, j) * D(l, j)\n",
                 "parallelize(k, CPUThread, NoRaces)",
                 {{"B", random({40, 30, 50}, 0.01, 3)}, {"C", random({40, 6}, 1.0, 4)}, {"D", random({30, 6}, 1.0, 5)}},
                 true});
  all.push_back({"sp_ttm_into_coo",
                 "tensor A(I, J, L) : coo\ntensor B(K, I, J) : csf\ntensor C(K, L) : csr\nA(i, j, l) = B(k, i, j) * C(k, l)\n",
                 "parallelize(k, CPUThread, NoRaces)",
                 {{"B", random({30, 20, 25}, 0.02, 6)}, {"C", random({30, 15}, 0.2, 7)}}, true});
  // Outputs appended in order that threads still cannot assemble in place
  // (COO), or that ask for the Workspace strategy: a doubly compressed
  // matrix under a summed loop and a CSF tensor. (A thread loop over the
  // output's first index, such as B + C over DCSR rows, B scaled, or under
  // NoRaces this SpGEMM through a dense workspace per thread, runs in
  // ranges that append a DCSR or CSF output in place instead:
  // test/lowering/ranges_append_output_test.cpp and
  // ranges_append_dense_levels_and_sums_test.cpp.)
  all.push_back({"rowwise_spgemm_into_dcsr",
                 "tensor A(I, J) : dcsr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n",
                 "parallelize(i, CPUThread, Workspace)", {{"B", real}, {"C", real}}});
  all.push_back({"scaled_into_csf",
                 "tensor A(I, J, K) : csf\ntensor B(I, J, K) : csf\ntensor c(K) : dense\n"
                 "A(i, j, k) = B(i, j, k) * c(k)\n",
                 "parallelize(i, CPUThread, Workspace)",
                 {{"B", random({30, 20, 25}, 0.05, 8)}, {"c", random({25}, 1.0, 9)}}});
  all.push_back({"product_into_coo",
                 "tensor A(I, J) : coo\ntensor B(I, J) : csr\ntensor C(I, J) : csr\nA(i, j) = B(i, j) * C(i, j)\n",
                 "parallelize(i, CPUThread, NoRaces)",
                 {{"B", random({200, 150}, 0.1, 10)}, {"C", random({200, 150}, 0.1, 11)}}});
  // Results large enough (4096 entries a range at least) that the
  // threads' runs are cut into several ranges, each compressed into its own
  // slice of the output (CSR, DCSR, COO, CSF); the dense reference bounds
  // the sizes.
  all.push_back({"outer_product_spgemm_many_ranges",
                 "tensor A(I, J) : csr\ntensor B(I, K) : csc\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n",
                 "parallelize(k, CPUThread, NoRaces)", {{"B", fs183}, {"C", fs183}}, true});
  all.push_back({"outer_product_spgemm_random_many_ranges",
                 "tensor A(I, J) : csr\ntensor B(I, K) : csc\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n",
                 "parallelize(k, CPUThread, NoRaces)",
                 {{"B", random({300, 300}, 0.05, 20)}, {"C", random({300, 300}, 0.05, 20)}}, true});
  all.push_back({"transposed_spgemm_many_ranges",
                 "tensor A(J, I) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(j, i) = B(i, k) * C(k, j)\n",
                 "parallelize(i, CPUThread, NoRaces)",
                 {{"B", random({300, 250}, 0.04, 21)}, {"C", random({250, 300}, 0.04, 22)}}});
  all.push_back({"sp_mttkrp_many_ranges",
                 "tensor A(I, J) : dcsr\ntensor B(K, L, I) : csf\ntensor C(K, J) : dense\ntensor D(L, J) : dense\n"
                 "A(i, j) = B(k, l, i) * C(k, j) * D(l, j)\n",
                 "parallelize(k, CPUThread, NoRaces)",
                 {{"B", random({40, 30, 2000}, 0.002, 23)}, {"C", random({40, 16}, 1.0, 24)},
                  {"D", random({30, 16}, 1.0, 25)}},
                 true});
  all.push_back({"sp_ttm_into_coo_many_ranges",
                 "tensor A(I, J, L) : coo\ntensor B(K, I, J) : csf\ntensor C(K, L) : csr\nA(i, j, l) = B(k, i, j) * C(k, l)\n",
                 "parallelize(k, CPUThread, NoRaces)",
                 {{"B", random({60, 80, 80}, 0.02, 26)}, {"C", random({60, 40}, 0.2, 27)}}, true});
  all.push_back({"scaled_into_csf_many_ranges",
                 "tensor A(I, J, K) : csf\ntensor B(I, J, K) : csf\ntensor c(K) : dense\n"
                 "A(i, j, k) = B(i, j, k) * c(k)\n",
                 "parallelize(i, CPUThread, Workspace)",
                 {{"B", random({300, 40, 50}, 0.05, 28)}, {"c", random({50}, 1.0, 29)}}});
  return all;
}

struct Outcome {
  int exitCode = -1;
  std::string output;
};

Outcome run(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.output.append(buffer, read);
  int status = pclose(pipe);
  outcome.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

class ParallelSparseWorkspace : public ::testing::TestWithParam<Case> {};

TEST_P(ParallelSparseWorkspace, EveryThreadCountMatchesTheSerialKernelAndTheReference) {
  const Case& c = GetParam();
  fs::path folder = fs::temp_directory_path() / ("tcc_parallel_ws_" + std::to_string(::getpid()) + "_" + c.name);
  fs::create_directories(folder);
  std::string parallelProgram = c.program + "schedule {\n  " + c.schedule + "\n}\n";
  std::ofstream(folder / "parallel.tc") << parallelProgram;
  std::string bindings;
  std::map<std::string, Tensor> inputs;
  Program serial = Program::fromText(c.program, "serial.tc");
  for (const auto& [name, coo] : c.inputs) {
    fs::path file = folder / (name + (coo.order() == 2 ? ".mtx" : ".tns"));
    if (coo.order() == 2)
      rt::writeMatrixMarket(file.string(), coo);
    else
      rt::writeTensorFile(file.string(), coo);
    bindings += " --in " + name + "='" + file.string() + "'";
    const TensorVar* declared = serial.syntax().findTensor(name);
    inputs.emplace(name, rt::pack(coo, toRuntimeFormat(declared->format())));
  }
  // The serial kernel, itself checked against the dense reference.
  expectMatchesReference(serial, inputs, 1e-12);
  std::vector<double> expected = rt::toDense(rt::unpack(compile(serial).run(inputs).at("A")));
  double scale = 1;
  for (double v : expected) scale = std::max(scale, std::abs(v));

  std::vector<int32_t> dims = rt::unpack(compile(serial).run(inputs).at("A")).dims;
  for (int threads : {1, 2, 3, 7, 16}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    fs::path out = folder / ("A" + std::to_string(threads) + (dims.size() == 2 ? ".mtx" : ".tns"));
    Outcome outcome = run("OMP_NUM_THREADS=" + std::to_string(threads) + " '" + std::string(TCC_EXECUTABLE) +
                          "' run '" + (folder / "parallel.tc").string() + "'" + bindings + " --out A='" +
                          out.string() + "'");
    ASSERT_EQ(outcome.exitCode, 0) << outcome.output;
    rt::Coo written = rt::readTensorFile(out.string(), dims);
    std::vector<double> actual = rt::toDense(written);
    ASSERT_EQ(actual.size(), expected.size());
    double worst = 0;
    for (size_t k = 0; k < actual.size(); ++k) worst = std::max(worst, std::abs(actual[k] - expected[k]));
    EXPECT_LE(worst, 1e-12 * scale) << "largest difference from the serial kernel";
  }
  Outcome explain = run("'" + std::string(TCC_EXECUTABLE) + "' explain '" + (folder / "parallel.tc").string() + "'");
  EXPECT_NE(explain.output.find(c.ownedRanges ? "so the threads' runs are disjoint" : "one per thread of the loop over"),
            std::string::npos)
    << explain.output;
  fs::remove_all(folder);
}

INSTANTIATE_TEST_SUITE_P(Scattering, ParallelSparseWorkspace, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tcc::e2e
