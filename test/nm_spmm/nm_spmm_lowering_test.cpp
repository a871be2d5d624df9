// The nm_spmm intrinsic without a GPU: which statements it takes on the
// cuda target and the reasons it gives for those it refuses; the CPU
// target's result (from a dense copy of the pruned B) against the dense
// reference; its launch plans; and the printed .cu compiled by nvcc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "gpu_intrinsic_nm_spmm.h"
#include "tcc/lowering/intrinsics.h"
#include "tcc/lowering/nm_spmm.h"
#include "tcc/runtime/nm.h"
#include "tcc/runtime/pack.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

std::string program(const std::string& declarations, const std::string& statement, const std::string& target = "cuda") {
  return declarations + statement + "\ntarget " + target + "\n";
}

const std::string kDeclarations =
    "tensor A(I, K) : dense of float32\ntensor B(K, J) : nm(16, 32, 32) of float32\n"
    "tensor C(I, J) : dense of float32\n";

Lowered lowerText(const std::string& text) { return lowerProgram(Program::fromText(text)); }

// The refusal's message; it is located at the statement (line 4).
std::string refusal(const std::string& text) {
  try {
    lowerText(text);
  } catch (const frontend::DiagnosticError& error) {
    if (error.diagnostics().size() != 1 || error.diagnostics()[0].location.line != 4) return error.what();
    return error.diagnostics()[0].message;
  }
  return "no error";
}

TEST(NmSpmmRecognition, TheProductIsTheIntrinsicOnTheCudaTarget) {
  for (const char* statement : {"C(i, j) = A(i, k) * B(k, j)", "C(i, j) = B(k, j) * A(i, k)",
                                "C(i, j) = sum(k, A(i, k) * B(k, j))"}) {
    SCOPED_TRACE(statement);
    Lowered lowered = lowerText(program(kDeclarations, statement));
    const auto* op = lowering::intrinsicOf(lowered.statements[0].function);
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->name, "nm_spmm");
    EXPECT_EQ(op->tensors, (std::vector<std::string>{"C", "A", "B"}));
    ASSERT_EQ(lowered.statements[0].decisions.size(), 1u);
    EXPECT_NE(lowered.statements[0].decisions[0].find("is the N:M SpMM intrinsic (B nm(16,32,32), 50% sparse)"),
              std::string::npos)
        << lowered.statements[0].decisions[0];
    EXPECT_NE(lowered.cudaKernels.find("tcc_nm_spmm_tile<2, 4, 8, 16, 32, 32, 1, 3, false, false, 1, false, false, false, false, false, false, false, false, false, false>"),
              std::string::npos);
    // The deep 16-row tile: two windows per k-tile, three stages (D's tile
    // sized for L = 32 leaves room for them), spread fills, D's tile a
    // k-tile ahead of A's and B''s, the kept rows' loads a row ahead (PIPE).
    EXPECT_NE(lowered.cudaKernels.find("tcc_nm_spmm_tile<1, 8, 16, 16, 32, 32, 2, 3, false, false, 2, false, false, true, false, false, true, false, true, false, false>"),
              std::string::npos);
    // The mbarrier pipeline: four stages where they fit (two k-tiles ahead), else three.
    EXPECT_NE(lowered.cudaKernels.find("tcc_nm_spmm_tile<2, 4, 8, 16, 32, 32, 1, 4, false, false, 1, true, false, false, false, false, false, false, false, false, false>"),
              std::string::npos);
    EXPECT_NE(lowered.cudaKernels.find("tcc_nm_spmm_tile<1, 8, 16, 16, 32, 32, 2, 3, false, false, 2, true, false, true, false, false, false, false, false, false, false>"),
              std::string::npos);
    // Each mbarrier tile also has a stream-K kernel.
    EXPECT_NE(lowered.cudaKernels.find("tcc_nm_spmm_tile<1, 8, 16, 16, 32, 32, 2, 3, false, false, 2, true, true, true, false, false, false, false, false, false, false>"),
              std::string::npos);
    EXPECT_NE(lowered.cudaKernels.find("_tallwide_deep_mbar_sk("), std::string::npos);
    // ... and one that takes whole tiles first (hybrid plans).
    EXPECT_NE(lowered.cudaKernels.find("tcc_nm_spmm_tile<1, 8, 16, 16, 32, 32, 2, 3, false, false, 2, true, true, true, false, true, false, false, false, false, false>"),
              std::string::npos);
    EXPECT_NE(lowered.cudaKernels.find("_tallwide_deep_mbar_hy("), std::string::npos);
    EXPECT_EQ(lowered.cudaKernels.find("_packed"), std::string::npos);  // 50%: no packing
    EXPECT_NE(lowered.cuda.find("_run(C, A, B)"), std::string::npos);
  }
}

// A stored k-major ({dense, dense} order (1,0)) is the intrinsic too: its
// kernels copy A's columns by 16 bytes (the template's last argument), and
// the tile that stages A row-major in shared memory is left out.
TEST(NmSpmmRecognition, AKMajorAIsTheIntrinsicWithItsOwnKernels) {
  const std::string declarations =
      "tensor A(I, K) : {dense, dense} order (1, 0) of float32\ntensor B(K, J) : nm(16, 32, 32) of float32\n"
      "tensor C(I, J) : dense of float32\n";
  Lowered lowered = lowerText(program(declarations, "C(i, j) = A(i, k) * B(k, j)"));
  const auto* op = lowering::intrinsicOf(lowered.statements[0].function);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name, "nm_spmm");
  ASSERT_EQ(op->args.size(), 5u);
  ASSERT_EQ(lowered.statements[0].decisions.size(), 1u);
  EXPECT_NE(lowered.statements[0].decisions[0].find("A k-major (its tiles copied by 16-byte copies of its columns)"),
            std::string::npos)
      << lowered.statements[0].decisions[0];
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_NE(kernels.find("A k-major"), std::string::npos);
  // The deep 16-row tile (spread fills, D a k-tile ahead) and an 8-row one, k-major.
  EXPECT_NE(kernels.find("tcc_nm_spmm_tile<1, 8, 16, 16, 32, 32, 2, 3, false, false, 2, false, false, true, false, "
                         "false, true, true, true, false, false>"),
            std::string::npos);
  EXPECT_NE(kernels.find("tcc_nm_spmm_tile<2, 4, 8, 16, 32, 32, 1, 3, false, false, 1, false, false, false, false, "
                         "false, false, true, false, false, false>"),
            std::string::npos);
  EXPECT_NE(kernels.find("A[(long long)row * m + i]"), std::string::npos);  // the simple kernel
  // Row-major A: only the kernels that run on its transpose ("_at") are
  // instantiated k-major.
  Lowered rowMajor = lowerText(program(kDeclarations, "C(i, j) = A(i, k) * B(k, j)"));
  int transposed = 0;
  for (size_t at = rowMajor.cudaKernels.find("tcc_nm_spmm_tile<"); at != std::string::npos;
       at = rowMajor.cudaKernels.find("tcc_nm_spmm_tile<", at + 1)) {
    // The 18th template argument, AKMAJOR.
    const size_t end = rowMajor.cudaKernels.find('>', at);
    std::stringstream arguments(rowMajor.cudaKernels.substr(at + 17, end - at - 17));
    std::vector<std::string> values;
    for (std::string value; std::getline(arguments, value, ',');) values.push_back(value);
    ASSERT_GT(values.size(), 17u);
    const size_t name = rowMajor.cudaKernels.rfind("__global__", at);
    const bool onTranspose = rowMajor.cudaKernels.substr(name, at - name).find("_at") != std::string::npos;
    transposed += onTranspose;
    EXPECT_EQ(values[17], onTranspose ? " true" : " false") << rowMajor.cudaKernels.substr(name, end - name + 1);
  }
  EXPECT_GT(transposed, 0);
  EXPECT_NE(rowMajor.statements[0].decisions[0].find("the k-major kernels of tallwide_deep on a k-major copy of A "
                                                     "that a tiled transpose makes first"),
            std::string::npos)
      << rowMajor.statements[0].decisions[0];
  EXPECT_EQ(lowered.statements[0].decisions[0].find("transpose"), std::string::npos);
  EXPECT_NE(rowMajor.cudaKernels.find("A[(long long)i * k + row]"), std::string::npos);
  // 87.5%, where the 64 x 512 tiles fit: the k-major one stays, the row-major one goes.
  auto sparse = [](const std::string& a) {
    return "tensor A(I, K) : " + a + " of float32\ntensor B(K, J) : nm(4, 32, 32) of float32\n"
           "tensor C(I, J) : dense of float32\n";
  };
  const std::string sparseKMajor =
      lowerText(program(sparse("{dense, dense} order (1, 0)"), "C(i, j) = A(i, k) * B(k, j)")).cudaKernels;
  const std::string sparseRowMajor = lowerText(program(sparse("dense"), "C(i, j) = A(i, k) * B(k, j)")).cudaKernels;
  EXPECT_NE(sparseKMajor.find("_xwide_deep_mbar("), std::string::npos);
  EXPECT_EQ(sparseKMajor.find("_xwide_rows_deep_mbar"), std::string::npos);
  EXPECT_NE(sparseKMajor.find("_wide_packed("), std::string::npos);
  EXPECT_NE(sparseRowMajor.find("_xwide_rows_deep_mbar("), std::string::npos);
}

// Square operands (one size S), so that the front end lets every index
// pattern through to the intrinsic.
std::string square(const std::string& a, const std::string& b, const std::string& c) {
  return "tensor A(S, S) : " + a + "\ntensor B(S, S) : " + b + "\ntensor C(S, S) : " + c + "\n";
}

TEST(NmSpmmRecognition, CloseStatementsAreRefusedWithTheReason) {
  const std::string f = "dense of float32", nm = "nm(2, 4, 4) of float32";
  const std::string shape = "the N:M SpMM intrinsic computes C(i,j) = A(i,k) * B(k,j) with A and C dense and B "
                            "{dense, nm(N,M,L)}, all float32";
  EXPECT_EQ(refusal(program(square(f, nm, f), "C(i, j) = A(i, k) * B(j, k)")),
            "cannot compile `C(i,j) = A(i,k) * B(j,k)`: B is read transposed (B(j,k)): N:M prunes B's rows in windows "
            "along the summed index, so the intrinsic needs B(k,j) with k summed, as in C(i,j) = A(i,k) * B(k,j) with "
            "A and C dense and B {dense, nm(N,M,L)}, all float32");
  EXPECT_EQ(refusal(program(square(f, nm, f), "C(i, j) = A(k, i) * B(k, j)")),
            "cannot compile `C(i,j) = A(k,i) * B(k,j)`: " + shape + "; C(i,j) = A(k,i) * B(k,j) indexes its operands "
            "otherwise");
  EXPECT_EQ(refusal(program(square(f, nm, f), "C(j, i) = A(i, k) * B(k, j)")),
            "cannot compile `C(j,i) = A(i,k) * B(k,j)`: " + shape + "; C(j,i) = A(i,k) * B(k,j) indexes its operands "
            "otherwise");
  EXPECT_EQ(refusal(program(square(f, nm, f), "C(i, j) = A(i, j) * B(i, j)")),
            "cannot compile `C(i,j) = A(i,j) * B(i,j)`: " + shape + "; C(i,j) = A(i,j) * B(i,j) indexes its operands "
            "otherwise");
  EXPECT_EQ(refusal(program(square("dense", "nm(2, 4, 4)", "dense"), "C(i, j) = A(i, k) * B(k, j)")),
            "cannot compile `C(i,j) = A(i,k) * B(k,j)`: the N:M SpMM intrinsic computes float32, but C is float64: "
            "declare C, A and B `of float32`");
  EXPECT_EQ(refusal(program(square(f, nm, "dense of float16"), "C(i, j) = A(i, k) * B(k, j)")),
            "cannot compile `C(i,j) = A(i,k) * B(k,j)`: the N:M SpMM intrinsic computes float32, but C is float16: "
            "declare C, A and B `of float32`");
  EXPECT_EQ(refusal(program(square("csr of float32", nm, f), "C(i, j) = A(i, k) * B(k, j)")),
            "cannot compile `C(i,j) = A(i,k) * B(k,j)`: A is stored {dense, compressed}; the N:M SpMM intrinsic "
            "reads it dense, row-major ({dense, dense}) or k-major ({dense, dense} order (1,0)): declare it so");
  EXPECT_EQ(refusal(program(square("dcsc of float32", nm, f), "C(i, j) = A(i, k) * B(k, j)")),
            "cannot compile `C(i,j) = A(i,k) * B(k,j)`: A is stored {compressed, compressed} order (1,0); the N:M "
            "SpMM intrinsic reads it dense, row-major ({dense, dense}) or k-major ({dense, dense} order (1,0)): "
            "declare it so");
  EXPECT_EQ(refusal(program(square(f, nm, "{dense, dense} order (1, 0) of float32"), "C(i, j) = A(i, k) * B(k, j)")),
            "cannot compile `C(i,j) = A(i,k) * B(k,j)`: C is stored {dense, dense} order (1,0); the N:M SpMM "
            "intrinsic writes it dense and row-major ({dense, dense}): declare it dense");
  EXPECT_EQ(refusal(program(square(f, nm, "csr of float32"), "C(i, j) = A(i, k) * B(k, j)")),
            "cannot compile `C(i,j) = A(i,k) * B(k,j)`: C is stored {dense, compressed}; the N:M SpMM intrinsic "
            "writes it dense and row-major ({dense, dense}): declare it dense");
  EXPECT_EQ(refusal(program(square(nm, nm, f), "C(i, j) = A(i, k) * B(k, j)")),
            "cannot compile `C(i,j) = A(i,k) * B(k,j)`: the N:M SpMM intrinsic multiplies a dense matrix by one N:M "
            "matrix, but both A and B are N:M");
  EXPECT_EQ(refusal(program("tensor x(K) : dense of float32\ntensor B(K, J) : nm(2, 4, 4) of float32\n"
                            "tensor y(J) : dense of float32\n",
                            "y(j) = x(k) * B(k, j)")),
            "cannot compile `y(j) = x(k) * B(k,j)`: " + shape + ", a product of matrices; here y, x and B have "
            "orders 1, 1 and 2");
}

// Statements that are not a product with an N:M operand read it densely,
// on either target.
TEST(NmSpmmRecognition, OtherStatementsReadTheNmMatrixFromADenseCopy) {
  for (const char* target : {"cuda", "cpu"}) {
    Lowered lowered = lowerText(program(kDeclarations + "tensor D(K, J) : dense of float32\n",
                                        "D(k, j) = B(k, j) + B(k, j)", target));
    EXPECT_EQ(lowering::intrinsicOf(lowered.statements[0].function), nullptr);
    ASSERT_EQ(lowered.statements[0].convertedInputs.size(), 1u);
    EXPECT_EQ(lowered.statements[0].convertedInputs[0].first, "B");
    EXPECT_EQ(lowered.statements[0].convertedInputs[0].second.name(), "B_dense");
  }
}

std::vector<double> randomDense(int rows, int cols, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> values(size_t(rows) * cols);
  for (double& value : values) value = static_cast<float>(unit(random));
  return values;
}

// The dense copy takes a name no tensor of the program has: beside the
// user's own B_dense, read by the same statement or by another (the cuda
// host looks tensors up by name across statements), it is B_dense_2.
TEST(NmSpmmRecognition, ADenseCopyBesideAUserTensorNamedLikeItTakesAnotherName) {
  const std::string declarations = "tensor B(K, J) : nm(2, 4, 4) of float32\ntensor B_dense(K, J) : dense of float32\n"
                                   "tensor D(K, J) : dense of float32\ntensor E(K, J) : dense of float32\n";
  for (const char* target : {"cuda", "cpu"}) {
    for (const std::string statements : {"D(k, j) = B(k, j) - B_dense(k, j)",
                                         "D(k, j) = B(k, j) + B(k, j)\nE(k, j) = 2 * B_dense(k, j)"}) {
      std::string text = program(declarations, statements, target);
      SCOPED_TRACE(text);
      Lowered lowered = lowerText(text);
      ASSERT_EQ(lowered.statements[0].convertedInputs.size(), 1u);
      EXPECT_EQ(lowered.statements[0].convertedInputs[0].second.name(), "B_dense_2");
      for (const auto& statement : lowered.statements) {
        std::set<std::string> names;
        for (const auto& parameter : statement.parameters)
          EXPECT_TRUE(names.insert(parameter.name()).second) << parameter.name();
      }
    }
  }
}

// ... and the cpu target computes B, pruned, minus the user's B_dense.
TEST(NmSpmmCpu, ADenseCopyBesideAUserTensorNamedLikeItMatchesTheDenseReference) {
  const std::string text = "tensor B(K, J) : nm(2, 4, 4) of float32\ntensor B_dense(K, J) : dense of float32\n"
                           "tensor D(K, J) : dense of float32\nD(k, j) = B(k, j) - B_dense(k, j)\n";
  const int rows = 12, cols = 10;
  std::vector<double> b = randomDense(rows, cols, 3), user = randomDense(rows, cols, 4);
  std::map<std::string, Tensor> inputs;
  inputs["B"] = rt::fromDense(b, {rows, cols}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
  inputs["B_dense"] = rt::fromDense(user, {rows, cols}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
  std::vector<double> result = rt::toDense(compile(Program::fromText(text)).run(inputs).at("D"));

  rt::Tensor pruned = rt::nmPruneAndPack(b, rows, cols, rt::TensorFormat({rt::LevelSpec::dense(), rt::LevelSpec::nm(2, 4, 4)}),
                                         rt::ValueType::Float32);
  DenseArray db{{rows, cols}, rt::nmUnpack(pruned)}, duser{{rows, cols}, user};
  std::vector<double> expected =
      evaluate(Program::fromText(text).statements(), {{"B", db}, {"B_dense", duser}}).at("D").values;
  ASSERT_EQ(result.size(), expected.size());
  ASSERT_TRUE(std::any_of(expected.begin(), expected.end(), [](double v) { return v != 0; }));
  for (size_t e = 0; e < expected.size(); ++e) EXPECT_NEAR(result[e], expected[e], 1e-6) << "entry " << e;
}

// On the cpu target the generic lowering computes the function the GPU
// intrinsic computes: A times the pruned B.
TEST(NmSpmmCpu, TheProductOfThePrunedMatrixMatchesTheDenseReference) {
  struct Case {
    int N, M, L, m, n, k;
  };
  // A row-major, and k-major (the layout the cuda target's intrinsic also takes).
  for (bool aKMajor : {false, true})
  for (const Case& c : {Case{2, 4, 4, 37, 41, 43}, Case{16, 32, 32, 20, 64, 96}, Case{4, 32, 32, 9, 70, 100},
                        Case{3, 5, 8, 11, 13, 17}}) {
    std::string text = std::string("tensor A(I, K) : ") + (aKMajor ? "{dense, dense} order (1, 0)" : "dense") +
                       " of float32\ntensor B(K, J) : nm(" + std::to_string(c.N) + ", " + std::to_string(c.M) + ", " +
                       std::to_string(c.L) +
                       ") of float32\ntensor C(I, J) : dense of float32\nC(i, j) = A(i, k) * B(k, j)\n";
    SCOPED_TRACE(text);
    Kernel kernel = compile(Program::fromText(text));
    // The cuda target lowers the same statement to the intrinsic.
    EXPECT_NE(lowering::intrinsicOf(lowerText(text + "target cuda\n").statements[0].function), nullptr);
    std::vector<double> a = randomDense(c.m, c.k, 1), b = randomDense(c.k, c.n, 2);
    std::map<std::string, Tensor> inputs;
    inputs["A"] = rt::fromDense(a, {c.m, c.k},
                                aKMajor ? rt::TensorFormat({rt::LevelSpec::dense(), rt::LevelSpec::dense()}, {1, 0})
                                        : rt::TensorFormat::dense(2),
                                rt::ValueType::Float32);
    inputs["B"] = rt::fromDense(b, {c.k, c.n}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
    std::vector<double> result = rt::toDense(kernel.run(inputs).at("C"));

    rt::Tensor pruned = rt::nmPruneAndPack(
        b, c.k, c.n, rt::TensorFormat({rt::LevelSpec::dense(), rt::LevelSpec::nm(c.N, c.M, c.L)}), rt::ValueType::Float32);
    DenseArray da{{c.m, c.k}, a}, db{{c.k, c.n}, rt::nmUnpack(pruned)};
    Program parsed = Program::fromText(text);
    std::vector<double> expected = evaluate(parsed.statements(), {{"A", da}, {"B", db}}).at("C").values;
    ASSERT_EQ(result.size(), expected.size());
    double scale = 0, worst = 0;
    for (size_t e = 0; e < expected.size(); ++e) {
      scale = std::max(scale, std::abs(expected[e]));
      worst = std::max(worst, std::abs(result[e] - expected[e]));
    }
    EXPECT_LE(worst, 1e-5 * scale);
    // Pruning removed something: the product differs from the unpruned one.
    DenseArray unpruned{{c.k, c.n}, b};
    std::vector<double> full = evaluate(parsed.statements(), {{"A", da}, {"B", unpruned}}).at("C").values;
    if (c.N < c.M) EXPECT_NE(full, expected);
  }
}

// A k-major: the candidates leave out the tile that stages A row-major, and
// keep the others (the deep 16-row tile among them), and add the k-major-only
// ones.
TEST(NmSpmmPlans, AKMajorAIsPlannedOnTheTilesThatTakeIt) {
  for (int N : {16, 12, 8, 4}) {
    lowering::NmSpmmShape rowMajor{4096, 4096, 4096, N, 32, 32}, kMajor = rowMajor;
    kMajor.aKMajor = true;
    auto labels = [](const lowering::NmSpmmShape& shape) {
      std::vector<std::string> names;
      for (const auto& plan : lowering::nmSpmmCandidatePlans(shape, 132)) names.push_back(lowering::nmSpmmPlanLabel(plan));
      return names;
    };
    // A row-major A's plans on its transpose ("_at"), apart.
    std::vector<std::string> expected, kMajorOnly, transposed;
    for (const std::string& label : labels(rowMajor))
      if (label.find("_at") != std::string::npos) transposed.push_back(label);
      else if (!label.starts_with("xwide_rows")) expected.push_back(label);
    auto onlyKMajor = [](const std::string& label) {
      for (const auto& tile : lowering::nmSpmmTiles()) {
        const std::string name = tile.name;
        if (tile.kMajorAOnly && (label == name || label == name + "_sk" || label == name + "_hy")) return true;
      }
      return false;
    };
    for (const std::string& label : labels(kMajor))
      if (onlyKMajor(label)) kMajorOnly.push_back(label);
    std::vector<std::string> kMajorLabels = labels(kMajor);
    std::erase_if(kMajorLabels, onlyKMajor);
    EXPECT_EQ(kMajorLabels, expected) << N;
    EXPECT_EQ(kMajorOnly.empty(), N == 16) << N;  // 62.5-87.5%: xwide_deep_mbar_pipe_sh (75%: tallwide_deep4)
    // A row-major A is planned on the k-major plans of the tiles that
    // transpose it (the k-major-only ones; at 50% tallwide_deep), each
    // after a transpose.
    std::vector<std::string> kMajorTransposed;
    for (const auto& plan : lowering::nmSpmmCandidatePlans(kMajor, 132)) {
      if (plan.tile < 0 || !lowering::nmSpmmTileTransposesA(lowering::nmSpmmTiles()[plan.tile], N, 32, 32)) continue;
      const std::string label = lowering::nmSpmmPlanLabel(plan);
      const size_t end = std::string(lowering::nmSpmmTiles()[plan.tile].name).size();
      kMajorTransposed.push_back(label.substr(0, end) + "_at" + label.substr(end));
    }
    EXPECT_FALSE(kMajorTransposed.empty()) << N;
    EXPECT_EQ(transposed, kMajorTransposed) << N;
    if (N == 16) EXPECT_EQ(transposed, std::vector<std::string>{"tallwide_deep_at"});
    for (const auto& plan : lowering::nmSpmmCandidatePlans(rowMajor, 132))
      EXPECT_EQ(plan.transposeA, lowering::nmSpmmPlanLabel(plan).find("_at") != std::string::npos);
    for (const auto& plan : lowering::nmSpmmCandidatePlans(kMajor, 132)) EXPECT_FALSE(plan.transposeA);
    EXPECT_NE(std::find(expected.begin(), expected.end(), "tallwide_deep"), expected.end()) << N;
  }
  EXPECT_TRUE(lowering::nmSpmmTileTakesA(lowering::nmSpmmTiles()[4], true));
  for (const auto& tile : lowering::nmSpmmTiles()) {
    if (tile.shiftA) EXPECT_TRUE(tile.kMajorAOnly) << tile.name;  // its pitch is a k-major A's
    EXPECT_EQ(lowering::nmSpmmTileTakesA(tile, false), !tile.kMajorAOnly) << tile.name;
    EXPECT_EQ(lowering::nmSpmmTileTakesA(tile, true), !tile.rowMajorA && !tile.tensorCores) << tile.name;
  }
}

TEST(NmSpmmPlans, SmallProductsSplitKAndLargeOnesUseLargeTiles) {
  using lowering::nmSpmmDefaultPlan;
  using lowering::nmSpmmTiles;
  lowering::NmSpmmShape large{4096, 4096, 4096, 16, 32, 32};
  auto plan = nmSpmmDefaultPlan(large, 132);
  EXPECT_EQ(std::string(nmSpmmTiles()[plan.tile].name), "large");
  EXPECT_EQ(plan.splits, 1);
  EXPECT_EQ(plan.grid[0], 32u);
  EXPECT_EQ(plan.grid[1], 32u);
  lowering::NmSpmmShape sparse{4096, 4096, 4096, 4, 32, 32};
  EXPECT_EQ(std::string(nmSpmmTiles()[nmSpmmDefaultPlan(sparse, 132).tile].name), "wide");
  lowering::NmSpmmShape small{256, 2048, 2048, 16, 32, 32};
  plan = nmSpmmDefaultPlan(small, 132);
  EXPECT_GT(plan.splits, 1);
  EXPECT_GE(int64_t(plan.grid[0]) * plan.grid[1] * plan.grid[2], 132);
  // Every k-tile is computed once: splits x tilesPerSplit covers them.
  int64_t kTiles = 2048 / 32;
  EXPECT_GE(int64_t(plan.splits) * plan.tilesPerSplit, kTiles);
  EXPECT_LT(int64_t(plan.splits - 1) * plan.tilesPerSplit, kTiles);
  int streamK = 0;
  for (const auto& candidate : lowering::nmSpmmCandidatePlans(small, 132)) {
    // k-tiles of this tile (deep tiles have fewer, of more windows).
    const auto& tile = lowering::nmSpmmTiles()[candidate.tile];
    int64_t tileKTiles = (2048 / 32 + lowering::nmSpmmTileWindows(tile, 16, 32) - 1) /
                         lowering::nmSpmmTileWindows(tile, 16, 32);
    if (candidate.streamK) {
      // Every (tile of C, k-tile) step is taken by exactly one CTA.
      ++streamK;
      EXPECT_TRUE(tile.mbarriers);
      int64_t steps = ((256 + tile.rows() - 1) / tile.rows()) * ((2048 + tile.cols() - 1) / tile.cols()) * tileKTiles;
      EXPECT_GE(int64_t(candidate.grid[0]) * candidate.tilesPerSplit, steps);
      EXPECT_LT(int64_t(candidate.grid[0] - 1) * candidate.tilesPerSplit, steps);
      EXPECT_LE(candidate.grid[0], 132u * lowering::nmSpmmCtasPerSm(tile));
      EXPECT_EQ(candidate.grid[1] * candidate.grid[2], 1u);
      EXPECT_EQ(lowering::nmSpmmKernelName("p", candidate), std::string("p_") + tile.name + "_sk");
      continue;
    }
    EXPECT_GE(int64_t(candidate.splits) * candidate.tilesPerSplit, tileKTiles);
    EXPECT_LT(int64_t(candidate.splits - 1) * candidate.tilesPerSplit, tileKTiles);
    EXPECT_LE(candidate.sharedBytes, 227 * 1024);
  }
  // 16 or 32 tiles of C for 132 SMs: the mbarrier tiles are also tried with stream-K.
  EXPECT_GT(streamK, 0);
  // 52 tiles of 128 x 256 (256 x 6656): x6 is 2.4 waves of 132 SMs, so the
  // candidates also split k in 5 (260 CTAs, 98% of two waves), each k-tile once.
  lowering::NmSpmmShape fitted{256, 6656, 6656, 16, 32, 32};
  bool fivefold = false;
  for (const auto& candidate : lowering::nmSpmmCandidatePlans(fitted, 132)) {
    if (candidate.streamK || candidate.cluster > 1 || std::string(nmSpmmTiles()[candidate.tile].name) != "tallwide_deep")
      continue;
    int64_t tileKTiles = 6656 / 32 / lowering::nmSpmmTileWindows(nmSpmmTiles()[candidate.tile], 16, 32);
    EXPECT_GE(int64_t(candidate.splits) * candidate.tilesPerSplit, tileKTiles);
    EXPECT_LT(int64_t(candidate.splits - 1) * candidate.tilesPerSplit, tileKTiles);
    fivefold |= candidate.splits == 5 && candidate.grid[2] == 5u && candidate.grid[0] * candidate.grid[1] == 52u;
  }
  EXPECT_TRUE(fivefold);
  // Not where the listed factors fill the waves already (256 x 5632: 44 tiles of 64 x 512, x3 is one wave).
  for (const auto& candidate : lowering::nmSpmmCandidatePlans({256, 5632, 2048, 8, 32, 32}, 132))
    EXPECT_TRUE(candidate.streamK || candidate.cluster > 1 || candidate.splits <= 4 || candidate.splits == 6 ||
                candidate.splits == 8)
        << lowering::nmSpmmPlanLabel(candidate) << " x" << candidate.splits;
  // Not where the tiles fill whole waves (1536 x 2816: 12 x 11 tiles of 128 x 256 on 132 SMs).
  for (const auto& candidate : lowering::nmSpmmCandidatePlans({1536, 2816, 4096, 16, 32, 32}, 132))
    EXPECT_FALSE(candidate.streamK && std::string(nmSpmmTiles()[candidate.tile].name) == "tallwide_deep_mbar");
  // More than a wave of tiles (4096^2: 512 tiles of 128 x 256 for 132 SMs,
  // 3.9 waves): the mbarrier tiles are also tried as a hybrid (whole tiles
  // for 3 waves, stream-K for the rest). Every (tile, k-tile) step is taken
  // once, and C is zeroed only from the first tile that the hybrid's
  // stream-K part adds into.
  lowering::NmSpmmShape big{4096, 4096, 4096, 16, 32, 32};
  int hybrid = 0;
  for (const auto& candidate : lowering::nmSpmmCandidatePlans(big, 132)) {
    if (candidate.wholeTiles == 0) continue;
    ++hybrid;
    const auto& tile = lowering::nmSpmmTiles()[candidate.tile];
    EXPECT_TRUE(candidate.streamK && tile.mbarriers);
    int64_t kTiles = 4096 / 32 / lowering::nmSpmmTileWindows(tile, 16, 32), tilesN = 4096 / tile.cols(),
            tiles = (4096 / tile.rows()) * tilesN;
    int64_t slots = 132 * lowering::nmSpmmCtasPerSm(tile);
    int64_t wholeTiles = std::min<int64_t>(tiles, int64_t(candidate.grid[0]) * candidate.wholeTiles);
    EXPECT_LE(candidate.grid[0], slots);
    EXPECT_EQ(lowering::nmSpmmKernelName("p", candidate), std::string("p_") + tile.name + "_hy");
    EXPECT_EQ(wholeTiles, (tiles / slots) * slots);
    int64_t left = (tiles - wholeTiles) * kTiles;
    EXPECT_GE(int64_t(candidate.grid[0]) * candidate.tilesPerSplit, left);
    EXPECT_LT(int64_t(candidate.grid[0]) * (candidate.tilesPerSplit - 1), left);
    EXPECT_EQ(lowering::nmSpmmPlanLabel(candidate), std::string(tile.name) + "_hy");
    EXPECT_EQ(lowering::nmSpmmZeroedFrom(big, candidate), (wholeTiles / tilesN) * tile.rows());
    EXPECT_EQ(lowering::nmSpmmLaunchFlag(candidate), candidate.wholeTiles);
  }
  EXPECT_GT(hybrid, 0);
  // Above 70% sparsity the packing kernels are candidates too.
  int packed = 0;
  for (const auto& candidate : lowering::nmSpmmCandidatePlans(sparse, 132)) packed += candidate.packed;
  EXPECT_GT(packed, 0);
  EXPECT_EQ(lowering::nmSpmmKernelName("p", lowering::nmSpmmCandidatePlans(sparse, 132).back()).rfind("p_", 0), 0u);
  // No tile fits L = 6 or M = 256: the simple kernel.
  EXPECT_EQ(nmSpmmDefaultPlan({100, 100, 100, 2, 4, 6}, 132).tile, -1);
  EXPECT_EQ(nmSpmmDefaultPlan({100, 100, 512, 8, 256, 32}, 132).tile, -1);
}

// Few tiles of C: the tiles with clusters are also split in thread block
// clusters of 2 or 4 CTAs, whose kernels sum the splits themselves (no
// zeroing, no atomics) and hold the partial tile in shared memory.
TEST(NmSpmmPlans, ClusterPlansSplitKExactlyAndZeroNothing) {
  using lowering::nmSpmmTiles;
  lowering::NmSpmmShape small{256, 4096, 4096, 16, 32, 32};  // 32 tiles of 128 x 256
  std::set<int> sizes;
  for (const auto& candidate : lowering::nmSpmmCandidatePlans(small, 132)) {
    if (candidate.cluster <= 1) continue;
    const auto& tile = nmSpmmTiles()[candidate.tile];
    EXPECT_TRUE(lowering::nmSpmmTileClusters(tile));
    EXPECT_FALSE(candidate.streamK || candidate.packed);
    EXPECT_EQ(candidate.cluster, candidate.splits);
    EXPECT_EQ(candidate.grid[2], unsigned(candidate.splits));
    EXPECT_LE(candidate.cluster, lowering::kNmSpmmLargestCluster);
    int64_t kTiles = 4096 / 32 / lowering::nmSpmmTileWindows(tile, 16, 32);
    EXPECT_GE(int64_t(candidate.splits) * candidate.tilesPerSplit, kTiles);
    EXPECT_LT(int64_t(candidate.splits - 1) * candidate.tilesPerSplit, kTiles);
    EXPECT_GE(candidate.sharedBytes, 4 * tile.rows() * (tile.cols() + 4));
    EXPECT_LE(candidate.sharedBytes, 227 * 1024);
    const std::string at = candidate.transposeA ? "_at" : "";  // (50%: tallwide_deep on A's transpose too)
    EXPECT_EQ(lowering::nmSpmmKernelName("p", candidate), std::string("p_") + tile.name + at + "_cl");
    EXPECT_EQ(lowering::nmSpmmPlanLabel(candidate), std::string(tile.name) + at + "_cl");
    EXPECT_EQ(lowering::nmSpmmZeroedFrom(small, candidate), 256);
    EXPECT_EQ(lowering::nmSpmmLaunchFlag(candidate), 0);
    // At most six waves of CTAs.
    EXPECT_LE(int64_t(candidate.grid[0]) * candidate.grid[1] * candidate.grid[2],
              6 * 132 * lowering::nmSpmmCtasPerSm(tile));
    sizes.insert(candidate.cluster);
  }
  EXPECT_TRUE(sizes.count(2) && sizes.count(4));
  // No cluster plan where the k-tiles do not give that many splits, or
  // for a tile without clusters.
  int tallwide = 0;
  for (int index = 0; index < static_cast<int>(nmSpmmTiles().size()); ++index)
    if (std::string(nmSpmmTiles()[index].name) == "tallwide_deep") tallwide = index;
  lowering::NmSpmmShape shallow{256, 4096, 192, 16, 32, 32};  // 3 k-tiles of 64 columns
  EXPECT_EQ(lowering::nmSpmmClusterPlan(shallow, tallwide, 3).cluster, 3);
  EXPECT_EQ(lowering::nmSpmmClusterPlan(shallow, tallwide, 4).cluster, 1);
  EXPECT_EQ(lowering::nmSpmmClusterPlan(small, 0, 4).cluster, 1);  // "large"
  EXPECT_EQ(lowering::nmSpmmClusterPlan(small, tallwide, 16).cluster, 1);
  // Many tiles of C: no cluster plans.
  for (const auto& candidate : lowering::nmSpmmCandidatePlans({4096, 4096, 4096, 16, 32, 32}, 132))
    EXPECT_EQ(candidate.cluster, 1);
}

TEST(NmSpmmPlans, MbarrierTilesHaveThreeOrFourStagesAndDsTileFollowsL) {
  using lowering::nmSpmmTiles;
  int mbarrierTiles = 0;
  for (int N : {16, 4})
    for (const auto& tile : nmSpmmTiles()) {
      if (!tile.mbarriers || !lowering::nmSpmmTileFits(tile, N, 32, 32)) continue;
      ++mbarrierTiles;
      int stages = lowering::nmSpmmStages(tile, N, 32, 32);
      EXPECT_TRUE(stages == 3 || stages == 4) << tile.name << ": " << stages;
      EXPECT_FALSE(lowering::nmSpmmTilePacks(tile, N, 32));  // no packing kernel
    }
  EXPECT_GE(mbarrierTiles, 5);  // 50%: large and tallwide_deep; 87.5%: large and the two 64 x 512 tiles
  // D's tile has one entry per kept row and column group: more groups
  // (smaller L) take more shared memory.
  const auto& large = nmSpmmTiles()[0];
  EXPECT_LT(lowering::nmSpmmSharedBytes(large, 16, 32, 32), lowering::nmSpmmSharedBytes(large, 16, 32, 4));
  EXPECT_EQ(lowering::nmSpmmSharedBytes(large, 16, 32, 128), lowering::nmSpmmSharedBytes(large, 16, 32, 256));
}

// The deep 16-row tile copies D's tile a k-tile ahead, into one more slot:
// at 50% three stages of A (64 x 132 floats), B' (32 x 256) and D (32 x 8
// ints), and a fourth D tile.
TEST(NmSpmmPlans, TheDeepTileHasOneMoreSlotOfD) {
  const lowering::NmSpmmTile* deep = nullptr;
  for (const auto& tile : lowering::nmSpmmTiles())
    if (std::string(tile.name) == "tallwide_deep") deep = &tile;
  ASSERT_NE(deep, nullptr);
  EXPECT_TRUE(deep->dNext);
  EXPECT_EQ(lowering::nmSpmmStages(*deep, 16, 32, 32), 3);
  EXPECT_EQ(lowering::nmSpmmSharedBytes(*deep, 16, 32, 32), 4 * (3 * (64 * 132 + 32 * 256 + 32 * 8) + 32 * 8));
  // 87.5%: two stages (four windows, 16 kept rows), three D tiles.
  EXPECT_EQ(lowering::nmSpmmStages(*deep, 4, 32, 32), 2);
  EXPECT_EQ(lowering::nmSpmmSharedBytes(*deep, 4, 32, 32), 4 * (2 * (128 * 132 + 16 * 256 + 16 * 8) + 16 * 8));
}

// tallwide_deep4 (k-tiles of four windows, two stages) fits only at 75% and
// takes only a k-major A: its kernels are generated and planned for that
// layout alone.
TEST(NmSpmmPlans, TheFourWindowTileIsForAKMajorAAt75Percent) {
  int index = -1;
  for (int i = 0; i < static_cast<int>(lowering::nmSpmmTiles().size()); ++i)
    if (std::string(lowering::nmSpmmTiles()[i].name) == "tallwide_deep4") index = i;
  ASSERT_GE(index, 0);
  const auto& deep4 = lowering::nmSpmmTiles()[index];
  EXPECT_TRUE(lowering::nmSpmmTileFits(deep4, 8, 32, 32));
  EXPECT_EQ(lowering::nmSpmmTileWindows(deep4, 8, 32), 4);
  EXPECT_EQ(lowering::nmSpmmStages(deep4, 8, 32, 32), 2);
  for (int N : {16, 12, 4}) EXPECT_FALSE(lowering::nmSpmmTileFits(deep4, N, 32, 32)) << N;
  EXPECT_TRUE(lowering::nmSpmmTileTakesA(deep4, true));
  EXPECT_FALSE(lowering::nmSpmmTileTakesA(deep4, false));
  EXPECT_NE(lowering::nmSpmmDeviceCode(8, 32, 32, "nm", true).find("nm_tallwide_deep4("), std::string::npos);
  EXPECT_EQ(lowering::nmSpmmDeviceCode(8, 32, 32, "nm", false).find("nm_tallwide_deep4("), std::string::npos);
  // A row-major A runs it on its transpose only.
  EXPECT_NE(lowering::nmSpmmDeviceCode(8, 32, 32, "nm", false).find("nm_tallwide_deep4_at("), std::string::npos);
  EXPECT_EQ(lowering::nmSpmmDeviceCode(8, 32, 32, "nm", true).find("_at("), std::string::npos);
  for (bool aKMajor : {false, true}) {
    lowering::NmSpmmShape shape{4096, 4096, 4096, 8, 32, 32, aKMajor};
    const auto plans = lowering::nmSpmmCandidatePlans(shape, 132);
    const bool planned = std::any_of(plans.begin(), plans.end(), [&](const auto& plan) { return plan.tile == index; });
    EXPECT_TRUE(planned);
    for (const auto& plan : plans)
      if (plan.tile == index) EXPECT_EQ(plan.transposeA, !aKMajor);
  }
}

// A row-major A on a k-major-only tile (or at 50% tallwide_deep): the plan
// transposes A first, into a k-major copy that the tile's k-major kernel
// ("_at") reads; the transpose kernel and those kernels are in the
// statement's device code, instantiated k-major, and the default plan
// never transposes (the printed launch has no scratch buffer).
TEST(NmSpmmPlans, ARowMajorAIsTransposedForTheKMajorOnlyTiles) {
  for (int N : {16, 12, 8, 4}) {
    SCOPED_TRACE(N);
    const std::string code = lowering::nmSpmmDeviceCode(N, 32, 32, "nm", false);
    bool fits = false;
    for (const auto& tile : lowering::nmSpmmTiles())
      if (lowering::nmSpmmTileTransposesA(tile, N, 32, 32)) {
        fits = true;
        const size_t at = code.find("nm_" + std::string(tile.name) + "_at(");
        ASSERT_NE(at, std::string::npos) << tile.name;
        const size_t call = code.find("tcc_nm_spmm_tile<", at);
        std::stringstream arguments(code.substr(call + 17, code.find('>', call) - call - 17));
        std::vector<std::string> values;
        for (std::string value; std::getline(arguments, value, ',');) values.push_back(value);
        ASSERT_GT(values.size(), 19u);
        EXPECT_EQ(values[17], " true");  // AKMAJOR
        EXPECT_EQ(values[19], tile.shiftA ? " true" : " false");
        // tallwide_deep only where no k-major-only tile fits (50%).
        EXPECT_TRUE(tile.kMajorAOnly || (N == 16 && std::string(tile.name) == "tallwide_deep")) << tile.name;
      }
    EXPECT_TRUE(fits);
    EXPECT_EQ(code.find("nm_transpose_a(") != std::string::npos, fits);
    EXPECT_EQ(lowering::nmSpmmDeviceCode(N, 32, 32, "nm", true).find("_transpose_a("), std::string::npos);
    for (const lowering::NmSpmmShape& shape : {lowering::NmSpmmShape{4096, 4096, 4096, N, 32, 32},
                                               lowering::NmSpmmShape{256, 1024, 4096, N, 32, 32},
                                               lowering::NmSpmmShape{100, 300, 257, N, 32, 32}}) {
      const auto plans = lowering::nmSpmmCandidatePlans(shape, 132);
      EXPECT_FALSE(plans.front().transposeA);
      EXPECT_FALSE(lowering::nmSpmmDefaultPlan(shape, 132).transposeA);
      int transposed = 0;
      for (const auto& plan : plans) {
        if (!plan.transposeA) continue;
        ++transposed;
        ASSERT_GE(plan.tile, 0);
        EXPECT_TRUE(lowering::nmSpmmTileTransposesA(lowering::nmSpmmTiles()[plan.tile], N, 32, 32));
        const std::string name = lowering::nmSpmmKernelName("nm", plan);
        EXPECT_NE(name.find("_at"), std::string::npos);
        EXPECT_NE(code.find(name + "("), std::string::npos) << name;
      }
      EXPECT_GT(transposed, 0);
    }
  }
  EXPECT_EQ(lowering::nmSpmmTransposeKernelName("nm"), "nm_transpose_a");
}

// What the library's host step keeps between calls of a statement.
TEST(NmSpmmLaunches, AKernelsSharedMemoryLimitIsRaisedOnceAndNeverLowered) {
  detail::SharedMemoryLimits limits;
  int kernel = 0, other = 0;  // (addresses standing for two functions)
  EXPECT_FALSE(limits.raise(1, &kernel, 48 * 1024)) << "the default limit needs no attribute";
  EXPECT_TRUE(limits.raise(1, &kernel, 100 * 1024));
  EXPECT_FALSE(limits.raise(1, &kernel, 100 * 1024)) << "set already";
  EXPECT_FALSE(limits.raise(1, &kernel, 90 * 1024)) << "a smaller plan of the same kernel must not lower it";
  EXPECT_TRUE(limits.raise(1, &kernel, 120 * 1024));
  EXPECT_TRUE(limits.raise(1, &other, 100 * 1024)) << "another function";
  EXPECT_TRUE(limits.raise(2, &kernel, 100 * 1024)) << "a handle of another module (loaded where one was freed)";
}

TEST(NmSpmmLaunches, KeptLaunchesAreFoundByModuleStatementAndShapeOnly) {
  detail::KeptByShape<int> kept;
  const lowering::NmSpmmShape shape{256, 4096, 4096, 4, 32, 32, false};
  EXPECT_EQ(kept.find(1, "tcc_nm0", shape), nullptr);
  const int& first = kept.keep(1, "tcc_nm0", shape, 7);
  ASSERT_NE(kept.find(1, "tcc_nm0", shape), nullptr);
  EXPECT_EQ(*kept.find(1, "tcc_nm0", shape), 7);
  EXPECT_EQ(&kept.keep(1, "tcc_nm0", shape, 8), &first) << "a second keep of the key keeps the first value";
  EXPECT_EQ(first, 7);
  // Any other module (a later one loaded at a freed one's address has
  // another id), statement, dimension, N:M or layout of A is another key.
  auto other = [&](lowering::NmSpmmShape changed) { return kept.find(1, "tcc_nm0", changed); };
  EXPECT_EQ(kept.find(2, "tcc_nm0", shape), nullptr);
  EXPECT_EQ(kept.find(1, "tcc_nm1", shape), nullptr);
  EXPECT_EQ(other({512, 4096, 4096, 4, 32, 32, false}), nullptr);
  EXPECT_EQ(other({256, 4097, 4096, 4, 32, 32, false}), nullptr);
  EXPECT_EQ(other({256, 4096, 4095, 4, 32, 32, false}), nullptr);
  EXPECT_EQ(other({256, 4096, 4096, 8, 32, 32, false}), nullptr);
  EXPECT_EQ(other({256, 4096, 4096, 4, 16, 32, false}), nullptr);
  EXPECT_EQ(other({256, 4096, 4096, 4, 32, 16, false}), nullptr);
  EXPECT_EQ(other({256, 4096, 4096, 4, 32, 32, true}), nullptr);
  // Kept values stay where they are while others are added.
  for (int m = 1; m <= 1000; ++m) kept.keep(3, "tcc_nm0", {m, 64, 64, 4, 32, 32, false}, m);
  EXPECT_EQ(kept.size(), 1001u);
  EXPECT_EQ(kept.find(1, "tcc_nm0", shape), &first);
  EXPECT_EQ(*kept.find(3, "tcc_nm0", {500, 64, 64, 4, 32, 32, false}), 500);
}

TEST(NmSpmmLaunches, LaunchPathsAreNamed) {
  for (auto path : {detail::NmSpmmLaunchPath::Uncached, detail::NmSpmmLaunchPath::Scalar,
                    detail::NmSpmmLaunchPath::Vector, detail::NmSpmmLaunchPath::Memset,
                    detail::NmSpmmLaunchPath::Overlapped, detail::NmSpmmLaunchPath::OverlappedLean,
                    detail::NmSpmmLaunchPath::Chained,
                    detail::NmSpmmLaunchPath::Graph})
    EXPECT_EQ(detail::nmSpmmLaunchPathNamed(detail::nmSpmmLaunchPathName(path)), path);
  EXPECT_EQ(detail::nmSpmmLaunchPathNamed("fast"), std::nullopt);
  const detail::NmSpmmLaunchPath before = detail::nmSpmmLaunchPath();
  detail::setNmSpmmLaunchPath(detail::NmSpmmLaunchPath::Memset);
  EXPECT_EQ(detail::nmSpmmLaunchPath(), detail::NmSpmmLaunchPath::Memset);
  detail::setNmSpmmLaunchPath(before);
}

// The zeroing kernels, and the tile kernels' wait for the zeroing kernel
// they may overlap, before they write C.
TEST(NmSpmmLaunches, TheZeroingKernelsAreGeneratedAndTileKernelsWaitBeforeWritingC) {
  const std::string code = lowering::nmSpmmDeviceCode(4, 32, 32, "p");
  EXPECT_NE(code.find("void p_zero(float* C, long long count)"), std::string::npos);
  EXPECT_NE(code.find("void p_zero4(float* C, long long count)"), std::string::npos);
  EXPECT_NE(code.find("griddepcontrol.launch_dependents"), std::string::npos);
  const size_t store = code.find("auto storeC = [&]");
  ASSERT_NE(store, std::string::npos);
  const size_t wait = code.find("tcc_nm_wait_for_previous_kernel();", store);
  ASSERT_NE(wait, std::string::npos);
  EXPECT_LT(wait, code.find("tcc_nm_red_add4(out", store)) << "C is added into only after the wait";
}

#ifdef TCC_NVCC
// The printed .cu (kernels, launch, entry point) compiles alone with nvcc,
// tensorcore() makes the intrinsic's kernels the tensor-core (3xTF32) tiles
// and only those; the others are the same as without it.
TEST(NmSpmmTensorCores, TensorcoreScheduleIsTheIntrinsicOnTensorCores) {
  const std::string tensorcore = "\nschedule {\n  tensorcore()\n}";
  Lowered lowered = lowerText(program(kDeclarations, "C(i, j) = A(i, k) * B(k, j)" + tensorcore));
  const auto* op = lowering::intrinsicOf(lowered.statements[0].function);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name, "nm_spmm");
  ASSERT_EQ(op->args.size(), 5u);
  EXPECT_EQ(op->args[4].as<ir::imp::IntImm>()->value, 1);
  ASSERT_EQ(lowered.statements[0].decisions.size(), 1u);
  const std::string& decision = lowered.statements[0].decisions[0];
  EXPECT_NE(decision.find("(3xTF32)"), std::string::npos) << decision;
  EXPECT_NE(decision.find("tc_wide 64x256 (k-tiles of 4 windows, 2 stages), tc_large 128x128"), std::string::npos)
      << decision;
  for (const char* kernel : {"tcc_nm_tc_tile<1, 8, 16, 32, 32, 4, 2>", "tcc_nm_tc_tile<2, 4, 16, 32, 32, 4, 2>",
                             "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "_simple("})
    EXPECT_NE(lowered.cudaKernels.find(kernel), std::string::npos) << kernel;
  for (const char* kernel : {"tcc_nm_spmm_tile<", "_transpose_a("})
    EXPECT_EQ(lowered.cudaKernels.find(kernel), std::string::npos) << kernel;
  Lowered plain = lowerText(program(kDeclarations, "C(i, j) = A(i, k) * B(k, j)"));
  EXPECT_EQ(lowering::intrinsicOf(plain.statements[0].function)->args[4].as<ir::imp::IntImm>()->value, 0);
  EXPECT_EQ(plain.cudaKernels.find("tcc_nm_tc_tile<"), std::string::npos);
}

// What the tensor-core tiles cannot compute is refused at tensorcore(),
// with the reason (the default kernels would compute it, but not on tensor
// cores, which the schedule asked for).
TEST(NmSpmmTensorCores, WhatTheTilesCannotComputeIsRefused) {
  const std::string tensorcore = "\nschedule {\n  tensorcore()\n}";
  auto declarations = [](const std::string& a, const std::string& nm) {
    return "tensor A(I, K) : " + a + " of float32\ntensor B(K, J) : nm(" + nm +
           ") of float32\ntensor C(I, J) : dense of float32\n";
  };
  auto refused = [&](const std::string& a, const std::string& nm) {
    try {
      lowerText(program(declarations(a, nm), "C(i, j) = A(i, k) * B(k, j)" + tensorcore));
    } catch (const frontend::DiagnosticError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(refused("{dense, dense} order (1, 0)", "16, 32, 32").find("tensor-core N:M kernels read A row-major"),
            std::string::npos);
  EXPECT_NE(refused("dense", "16, 32, 4").find("L must be 8, 16 or a multiple of 32"), std::string::npos);
  EXPECT_NE(refused("dense", "16, 32, 24").find("L must be 8, 16 or a multiple of 32"), std::string::npos);
  EXPECT_NE(refused("dense", "1, 128, 32").find("whole steps of 8"), std::string::npos);
  for (const char* nm : {"16, 32, 32", "4, 32, 32", "3, 5, 8", "2, 4, 8", "16, 32, 512"})
    EXPECT_EQ(refused("dense", nm), "no error") << nm;
}

// The plans under tensorcore(): the tensor-core tiles only (no packing,
// stream-K, clusters or transposes), the wide one by default, split-K for
// few tiles of C; k-tiles and stages as measured at 4096^3
// (bench/nm_spmm/RESULTS.md): four windows (eight at 87.5%, whose windows
// are two at a time), two stages, three at 75%.
TEST(NmSpmmTensorCores, PlansUseTheTensorCoreTilesOnly) {
  const auto& tiles = lowering::nmSpmmTiles();
  for (int N : {16, 12, 8, 4}) {
    SCOPED_TRACE(N);
    lowering::NmSpmmShape shape{4096, 4096, 4096, N, 32, 32, false, true};
    lowering::NmSpmmPlan plan = lowering::nmSpmmDefaultPlan(shape, 132);
    ASSERT_GE(plan.tile, 0);
    EXPECT_EQ(std::string(tiles[plan.tile].name), "tc_wide");
    EXPECT_EQ(plan.threads, 256);
    EXPECT_LE(plan.sharedBytes, 227 * 1024);
    const lowering::NmSpmmTile& wide = tiles[plan.tile];
    EXPECT_EQ(lowering::nmSpmmTileWindows(wide, N, 32), N == 4 ? 8 : 4);
    EXPECT_EQ(lowering::nmSpmmStages(wide, N, 32, 32), N == 8 ? 3 : 2);
    EXPECT_EQ(lowering::nmSpmmCtasPerSm(wide), 1);
    for (const auto& candidate : lowering::nmSpmmCandidatePlans(shape, 132)) {
      ASSERT_GE(candidate.tile, 0);
      EXPECT_TRUE(tiles[candidate.tile].tensorCores) << lowering::nmSpmmPlanLabel(candidate);
      EXPECT_FALSE(candidate.packed || candidate.streamK || candidate.transposeA || candidate.cluster > 1);
    }
    // Without tensorcore() no candidate is a tensor-core tile.
    shape.tensorCores = false;
    for (const auto& candidate : lowering::nmSpmmCandidatePlans(shape, 132))
      if (candidate.tile >= 0) EXPECT_FALSE(tiles[candidate.tile].tensorCores) << lowering::nmSpmmPlanLabel(candidate);
  }
  // 256 x 2048: 8 tiles of C on 132 SMs: split-K.
  lowering::NmSpmmShape few{256, 2048, 2048, 16, 32, 32, false, true};
  bool split = false;
  for (const auto& candidate : lowering::nmSpmmCandidatePlans(few, 132)) split |= candidate.splits > 1;
  EXPECT_TRUE(split);
  EXPECT_GT(lowering::nmSpmmDefaultPlan(few, 132).splits, 1);
}

// warnings as errors, for tiles of every kind and for the simple kernel.
TEST(NmSpmmCuda, ThePrintedFileCompilesWithNvcc) {
  namespace fs = std::filesystem;
  if (!fs::exists(TCC_NVCC)) GTEST_SKIP() << "nvcc not found";
  fs::path work = fs::temp_directory_path() / ("tcc_nm_spmm_nvcc_" + std::to_string(::getpid()));
  fs::create_directories(work);
  // A k-major: the 16-byte copies of A's columns (spread, mbarrier, stream-K and packing kernels).
  // A row-major A at 75%: the transpose and the k-major kernels that run on it.
  // tensorcore(): the tensor-core tiles, L of 32 and 8.
  for (const char* nm : {"4, 32, 32", "8, 32, 32", "3, 5, 8", "2, 4, 6", "16, 32, 32 k-major", "4, 32, 32 k-major",
                         "16, 32, 32 tensorcore", "3, 5, 8 tensorcore"}) {
    SCOPED_TRACE(nm);
    const std::string spec(nm);
    const bool aKMajor = spec.ends_with(" k-major"), tensorCores = spec.ends_with(" tensorcore");
    std::string text = std::string("tensor A(I, K) : ") + (aKMajor ? "{dense, dense} order (1, 0)" : "dense") +
                       " of float32\ntensor B(K, J) : nm(" + spec.substr(0, spec.find(' ', spec.rfind(',') + 2)) +
                       ") of float32\ntensor C(I, J) : dense of float32\nC(i, j) = A(i, k) * B(k, j)\n" +
                       (tensorCores ? "schedule {\n  tensorcore()\n}\n" : "") + "target cuda\n";
    fs::path source = work / "nm.cu";
    std::ofstream(source) << lowerText(text).cuda;
    std::string command = std::string(TCC_NVCC) + " -arch=sm_90 -Werror all-warnings -c " + source.string() + " -o " +
                          (work / "nm.o").string() + " 2>" + (work / "log.txt").string();
    int status = std::system(command.c_str());
    std::ifstream log(work / "log.txt");
    std::string errors((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_EQ(status, 0) << errors;
  }
  fs::remove_all(work);
}
#endif

}  // namespace
}  // namespace tcc::test
