// Eigen 3's form of the kernel cases (cpu_kernel_cases.h) it has: SpMV,
// SpMM, SpGEMM, Add and MTTKRP (as the mode-1 matricization times the
// Khatri-Rao product). Each peer builds its operands once from the case's
// inputs; run() computes into its own output, result() reads it.
#pragma once

#include <Eigen/Dense>
#include <Eigen/Sparse>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "cpu_kernel_cases.h"
#include "result_entries.h"

using SparseRow = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
using DenseRow = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline SparseRow toEigen(const tcc::rt::Coo& coo) {
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(coo.nnz());
  for (size_t k = 0; k < coo.nnz(); ++k) triplets.emplace_back(coo.coords[0][k], coo.coords[1][k], coo.values[k]);
  SparseRow matrix(coo.dims[0], coo.dims[1]);
  matrix.setFromTriplets(triplets.begin(), triplets.end());
  return matrix;
}

// A dense Coo's values, row-major, as an Eigen matrix of `rows` rows.
inline DenseRow denseOf(const tcc::rt::Coo& coo, Eigen::Index rows) {
  tcc::rt::Coo sorted = coo;
  sorted.sort();
  const Eigen::Index columns = rows == 0 ? 0 : static_cast<Eigen::Index>(sorted.nnz()) / rows;
  return Eigen::Map<const DenseRow>(sorted.values.data(), rows, columns);
}

inline Entries entriesOf(const SparseRow& matrix) {
  Entries entries;
  for (int i = 0; i < matrix.outerSize(); ++i)
    for (SparseRow::InnerIterator it(matrix, i); it; ++it)
      if (it.value() != 0) entries.push_back({{i, static_cast<int64_t>(it.col())}, it.value()});
  std::sort(entries.begin(), entries.end());
  return entries;
}

inline Entries entriesOf(const DenseRow& matrix) {
  Entries entries;
  for (Eigen::Index i = 0; i < matrix.rows(); ++i)
    for (Eigen::Index j = 0; j < matrix.cols(); ++j)
      if (matrix(i, j) != 0) entries.push_back({{i, j}, matrix(i, j)});
  return entries;
}

struct EigenPeer {
  std::function<void()> run;
  std::function<Entries()> result;
};

// Eigen's peer of the case, or nullopt where Eigen has no such kernel.
inline std::optional<EigenPeer> eigenPeer(const KernelCase& c) {
  const auto& in = c.inputs;
  if (c.kernel == "SpMV") {  // vectors, so that Eigen takes its sparse matrix-vector product
    auto A = std::make_shared<SparseRow>(toEigen(in.at("A")));
    tcc::rt::Coo xCoo = in.at("x");
    xCoo.sort();
    auto x = std::make_shared<Eigen::VectorXd>(Eigen::Map<const Eigen::VectorXd>(xCoo.values.data(), xCoo.dims[0]));
    auto y = std::make_shared<Eigen::VectorXd>(A->rows());
    return EigenPeer{[=] { y->noalias() = *A * *x; },
                     [=] {
                       Entries entries;
                       for (Eigen::Index i = 0; i < y->size(); ++i)
                         if ((*y)(i) != 0) entries.push_back({{i}, (*y)(i)});
                       return entries;
                     }};
  }
  if (c.kernel == "SpMM") {
    auto A = std::make_shared<SparseRow>(toEigen(in.at("A")));
    auto B = std::make_shared<DenseRow>(denseOf(in.at("B"), in.at("B").dims[0]));
    auto C = std::make_shared<DenseRow>(A->rows(), B->cols());
    return EigenPeer{[=] { C->noalias() = *A * *B; }, [=] { return entriesOf(*C); }};
  }
  if (c.kernel == "SpGEMM" || c.kernel == "Add") {
    auto A = std::make_shared<SparseRow>(toEigen(in.at("A"))), B = std::make_shared<SparseRow>(toEigen(in.at("B")));
    auto C = std::make_shared<SparseRow>();
    std::function<void()> run = [=] { *C = *A * *B; };
    if (c.kernel == "Add") run = [=] { *C = *A + *B; };
    return EigenPeer{run, [=] { return entriesOf(*C); }};
  }
  if (c.kernel == "MTTKRP") {
    const tcc::rt::Coo& b = in.at("B");
    const int32_t I = b.dims[0], K = b.dims[1], L = b.dims[2];
    // The mode-1 matricization B_(1) (I x K*L, column k*L + l) times the
    // Khatri-Rao product of C and D (row k*L + l = C(k, :) .* D(l, :)).
    std::vector<Eigen::Triplet<double>> matricized;
    for (size_t e = 0; e < b.nnz(); ++e)
      matricized.emplace_back(b.coords[0][e], static_cast<int>(b.coords[1][e]) * L + b.coords[2][e], b.values[e]);
    auto B1 = std::make_shared<SparseRow>(I, static_cast<Eigen::Index>(K) * L);
    B1->setFromTriplets(matricized.begin(), matricized.end());
    auto C = std::make_shared<DenseRow>(denseOf(in.at("C"), K)), D = std::make_shared<DenseRow>(denseOf(in.at("D"), L));
    auto khatriRao = std::make_shared<DenseRow>(static_cast<Eigen::Index>(K) * L, C->cols());
    auto A = std::make_shared<DenseRow>(I, C->cols());
    return EigenPeer{[=] {
                       for (int k = 0; k < K; ++k)
                         for (int l = 0; l < L; ++l)
                           khatriRao->row(static_cast<Eigen::Index>(k) * L + l) = C->row(k).cwiseProduct(D->row(l));
                       A->noalias() = *B1 * *khatriRao;
                     },
                     [=] { return entriesOf(*A); }};
  }
  return std::nullopt;
}
