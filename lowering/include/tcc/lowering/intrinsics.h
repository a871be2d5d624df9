// Statements that no general lowering reaches, lowered to one Intrinsic
// node that each backend expands as a whole (see ir::imp::Intrinsic).
//
// Each intrinsic is one entry of a table (lowering/src/intrinsics/
// registry.cpp) that says how it is recognised in concrete index notation,
// what `tcc explain` says of it, and how each backend expands it:
//
//   p = perm(A)   "permanent", tensors {p, A}: the sparse matrix permanent
//                 of square A into the scalar p; exact when p's element type
//                 is an integer. The C++ backend calls the runtime's
//                 precompiled tcc_permanent (tcc/runtime/permanent.h); the
//                 CUDA backend calls tcc_permanent_cuda, which generates
//                 and compiles kernels for the matrix at run time
//                 (tcc/runtime/permanent_gpu.h; float results only).
//   C(i,j) = A(i,k) * B(k,j), B {dense, nm(N,M,L)}   "nm_spmm", tensors
//                 {C, A, B}, args {N, M, L}: vector-wise N:M SpMM, float32,
//                 cuda target only (tcc/lowering/nm_spmm.h). A product with
//                 an N:M operand it cannot compute is refused with the
//                 reason; on the cpu target, and in any other statement, an
//                 N:M matrix is read from a dense copy (isNmSpmmCandidate).
//   O = S * D     "tca_spmm", tensors {O, S, D}: TCA-SpMM, O(i,j) =
//                 S(i,k) * D(k,j) on tensor cores, S CSR float16, D dense
//                 float16, O dense float32 (tcc/lowering/tca_spmm.h); cuda
//                 only, under tensorcore() or by default for those types.
//
// The CUDA backend's expansion (device code plus host code) is the entry's
// `cuda` part; the in-process CUDA run's host step is registered in the
// library beside the launcher (compiler/src/api/gpu_intrinsic_runners.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/lower.h"

namespace tcc::lowering {

inline constexpr const char* kPermanentIntrinsic = "permanent";

// How the CUDA backend expands one Intrinsic statement. `prefix` is unique
// to the statement within the program: every global name the expansion
// emits (kernels, device functions, host helpers) starts with it.
struct CudaIntrinsicExpansion {
  // NVRTC-ready device code (no system header; int32_t, int64_t and
  // uint16_t are defined): `extern "C" __global__` kernels and their
  // device functions, specialised on the statement. May be empty (an
  // intrinsic whose kernels are generated per input at run time).
  std::string (*deviceCode)(const ir::imp::Intrinsic& op, const std::string& prefix) = nullptr;
  // Host code for the self-contained .cu file, printed before the entry
  // points: definitions of functions named from `prefix`.
  std::string (*hostDefinitions)(const ir::imp::Intrinsic& op, const std::string& prefix) = nullptr;
  // The statement the entry point runs: the tensors are `tcc_tensor*`
  // variables named as op.tensors (arrays in device memory); on failure it
  // returns a non-zero status from the entry point.
  std::string (*hostStatement)(const ir::imp::Intrinsic& op, const std::string& prefix) = nullptr;
};

struct IntrinsicLowering {
  const char* name = nullptr;
  // The function computing `cin` when this intrinsic recognises it, else
  // nullopt. Throws LoweringError when it recognises a statement it cannot
  // compute right (wrong shape, type or place), with the reason.
  std::optional<ir::imp::Function> (*recognize)(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                                const LowerOptions& options) = nullptr;
  // What `tcc explain` says of a statement lowered to `op`.
  std::string (*explain)(const ir::imp::Function& function, const ir::imp::Intrinsic& op) = nullptr;
  // The C++ backend's statement for `op`; null when there is no CPU expansion.
  std::string (*cppStatement)(const ir::imp::Intrinsic& op) = nullptr;
  // The CUDA backend's expansion; deviceCode and hostStatement null when
  // there is none.
  CudaIntrinsicExpansion cuda;
};

// Whether a level of the tensor's format is N:M.
bool hasNmLevel(const ir::TensorVar& tensor);
// Whether a statement (tensor index notation) is a product of two tensors,
// one of them N:M: on the cuda target the nm_spmm intrinsic computes it or
// refuses it with the reason. Elsewhere N:M operands are read from dense
// copies, converted when the kernel runs (the pruned matrix, densely).
bool isNmSpmmCandidate(const ir::IndexStmt& statement);

// Every intrinsic, in the order they are tried.
const std::vector<IntrinsicLowering>& intrinsicLowerings();
// The table's entry named `name`, or nullptr.
const IntrinsicLowering* intrinsicLowering(const std::string& name);

// The function for a statement that is an intrinsic, or nullopt for one the
// general lowerer handles. Throws LoweringError for a builtin it recognises
// in a place it cannot go (perm inside a larger expression, say).
std::optional<ir::imp::Function> lowerIntrinsic(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                                const LowerOptions& options);

// The Intrinsic statement of a function lowerIntrinsic made, else nullptr.
const ir::imp::Intrinsic* intrinsicOf(const ir::imp::Function& function);

// What `tcc explain` says of a function lowerIntrinsic made (nullopt for
// any other function): which intrinsic, and its mode.
std::optional<std::string> intrinsicDecision(const ir::imp::Function& function);

// The C++ statement an Intrinsic node becomes (C++ backend); throws
// LoweringError for an intrinsic that has no CPU expansion.
std::string cppIntrinsicStatement(const ir::imp::Intrinsic& intrinsic);

// The element type of a tensor's values in imperative IR; float16 is
// refused (a storage-only type on the CPU) unless `allowFloat16`.
ir::imp::ScalarKind intrinsicValueKind(const ir::TensorVar& tensor, bool allowFloat16 = false);

}  // namespace tcc::lowering
