// TCA-SpMM, the Tensor-Core-adapted CSR SpMM (see tcc/lowering/tca_spmm.h
// and tcc/lowering/intrinsics.h).
//
// Recognised in concrete index notation: one assignment O(a,b) = S(a,c) *
// D(c,b) (either factor order) on the cuda target, with S stored CSR and D,
// O dense row-major. It is used when the schedule says tensorcore(), and by
// default when S and D are float16 and O float32. Under tensorcore(), a
// statement it cannot compute right (another shape, format, element type or
// target) is refused with the reason.
//
// Algorithm (Section 4 of the TCA-SpMM paper, on mma.sync m16n8k8 f16 -> f32):
// each warp takes a row (or its share of a long row), matricizes the row's
// nonzeros into the MMA's right operand and the matching compressed dense
// rows into the left operand, and reduces the output's diagonal blocks with
// warp shuffles. The warp keeps the loop over the dense columns inside, so a
// chunk of the sparse row is reused across all its column tiles, and it
// loads the compressed dense rows with coalesced 128-bit loads straight into
// the operand registers (tca_spmm_device.cpp).
//
// Where the paper stages the compressed dense columns (its RHS buffer) and
// the output through shared memory, this kernel does not: a lane's operand
// fragment is two 128-bit loads of whole dense-row segments, already
// coalesced (8 lanes read one row's 128 contiguous bytes), and each tile's
// output leaves as 64-bit stores of contiguous columns (a warp writes 256
// contiguous bytes), so staging would add a copy and a barrier and save no
// memory transaction; no warp reads another warp's dense rows. Measured on
// the H100 it moves dense rows at the L2's rate (bench/tca_spmm/RESULTS.md).
#pragma once

#include "tcc/lowering/intrinsics.h"
#include "tcc/lowering/tca_spmm.h"

namespace tcc::lowering {

std::optional<ir::imp::Function> recognizeTcaSpmm(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                                  const LowerOptions& options);
std::string explainTcaSpmm(const ir::imp::Function& function, const ir::imp::Intrinsic& op);

// The CUDA expansion.
std::string tcaSpmmDeviceCode(const ir::imp::Intrinsic& op, const std::string& prefix);
std::string tcaSpmmHostDefinitions(const ir::imp::Intrinsic& op, const std::string& prefix);
std::string tcaSpmmHostStatement(const ir::imp::Intrinsic& op, const std::string& prefix);

}  // namespace tcc::lowering
