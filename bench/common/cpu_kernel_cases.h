// The CPU kernels the peer benches time (tcc_eigen_bench, tcc_mlir_bench,
// tcc_cpu_peers_bench), each as a tcc program and the tensors it reads,
// built from one real matrix, so that every bench and every peer computes
// on the same inputs.
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_inputs.h"
#include "folded_rows.h"
#include "tcc/tcc.h"

constexpr int kSpmmColumns = 64;
constexpr int kSddmmInner = 32;
constexpr int kTtmColumns = 16;
constexpr int kMttkrpRank = 16;
constexpr int kMttkrpModeThree = 16;  // B(i, k, l) from the matrix's (i, k) with l = k mod 16

struct KernelCase {
  std::string kernel;  // SpMV, SpMM, SDDMM, TTM, MTTKRP, SpGEMM, Add
  std::string input;   // the matrix's name
  std::string dsl;     // one statement; its output is `output`
  std::string output;
  std::map<std::string, tcc::rt::Coo> inputs;
};

// A comma-separated list (the benches' --kernels).
inline std::vector<std::string> commaSeparated(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
  return parts;
}

// MTTKRP A(i,j) = B(i,k,l) C(k,j) D(l,j) on the order-3 tensor `b`, C and D
// seeded dense factors of rank kMttkrpRank.
inline KernelCase mttkrpCase(const std::string& name, tcc::rt::Coo b) {
  const int32_t modeTwo = b.dims[1], modeThree = b.dims[2];
  return KernelCase{"MTTKRP", name,
                    "tensor A(I, J) : dense\ntensor B(I, K, L) : csf\ntensor C(K, J) : dense\ntensor D(L, J) : dense\n"
                    "A(i, j) = B(i, k, l) * C(k, j) * D(l, j)\n",
                    "A", {{"B", std::move(b)}, {"C", denseCoo({modeTwo, kMttkrpRank}, 3)},
                          {"D", denseCoo({modeThree, kMttkrpRank}, 4)}}};
}

// The case of `kernel` (spmv, spmm, sddmm, ttm, mttkrp, spgemm, add) on
// matrix `a` named `name`; nullopt for another name.
inline std::optional<KernelCase> kernelCaseOf(const std::string& kernel, const std::string& name, const tcc::rt::Coo& a) {
  const int32_t rows = a.dims[0], columns = a.dims[1];
  if (kernel == "spmv")
    return KernelCase{"SpMV", name, "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i, j) * x(j)\n",
                      "y", {{"A", a}, {"x", denseCoo({columns}, 1)}}};
  if (kernel == "spmm")
    return KernelCase{"SpMM", name,
                      "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\nC(i, k) = A(i, j) * B(j, k)\n",
                      "C", {{"A", a}, {"B", denseCoo({columns, kSpmmColumns}, 2)}}};
  if (kernel == "sddmm")  // TACO's form: the k loop reads D down a column
    return KernelCase{"SDDMM", name,
                      "tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, K) : dense\ntensor D(K, J) : dense\n"
                      "A(i, j) = B(i, j) * C(i, k) * D(k, j)\n",
                      "A", {{"B", a}, {"C", denseCoo({rows, kSddmmInner}, 5)}, {"D", denseCoo({kSddmmInner, columns}, 6)}}};
  if (kernel == "ttm") {  // the matrix's rows folded into B's first two modes
    tcc::rt::Coo b = foldedRows(a);
    b.sort();
    return KernelCase{"TTM", name,
                      "tensor A(I, J, K) : dense\ntensor B(I, J, L) : csf\ntensor C(K, L) : dense\n"
                      "A(i, j, k) = B(i, j, l) * C(k, l)\n",
                      "A", {{"B", b}, {"C", denseCoo({kTtmColumns, columns}, 8)}}};
  }
  if (kernel == "mttkrp") {  // B(i, k, l) = a(i, k) with l = k mod 16
    tcc::rt::Coo b = tcc::rt::Coo::ofShape({rows, columns, kMttkrpModeThree});
    for (size_t e = 0; e < a.nnz(); ++e) {
      int32_t coordinate[3] = {a.coords[0][e], a.coords[1][e], a.coords[1][e] % kMttkrpModeThree};
      b.push(coordinate, a.values[e]);
    }
    b.sort();
    return mttkrpCase(name, std::move(b));
  }
  if (kernel == "spgemm")  // A A for square matrices, A A^T otherwise
    return KernelCase{"SpGEMM", name,
                      "tensor C(I, J) : csr\ntensor A(I, K) : csr\ntensor B(K, J) : csr\nC(i, j) = A(i, k) * B(k, j)\n",
                      "C", {{"A", a}, {"B", rows == columns ? a : transposed(a)}}};
  if (kernel == "add") {
    // The second operand: -A^T / 2 for square matrices, else -A / 2 with
    // its rows rotated by one; either way a pattern that differs from A's.
    tcc::rt::Coo b = tcc::rt::Coo::ofShape(a.dims);
    for (size_t k = 0; k < a.nnz(); ++k) {
      int32_t coordinate[2] = {a.coords[1][k], a.coords[0][k]};
      if (rows != columns) coordinate[0] = (a.coords[0][k] + 1) % rows, coordinate[1] = a.coords[1][k];
      b.push(coordinate, -0.5 * a.values[k]);
    }
    b.sort();
    return KernelCase{"Add", name,
                      "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nC(i, j) = A(i, j) + B(i, j)\n",
                      "C", {{"A", a}, {"B", b}}};
  }
  return std::nullopt;
}

// The case's inputs packed in the formats its program declares.
inline std::map<std::string, tcc::Tensor> packedInputs(const tcc::Program& program, const KernelCase& kernelCase) {
  return packedFor(program, kernelCase.inputs);
}
