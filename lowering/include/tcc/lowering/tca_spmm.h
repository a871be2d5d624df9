// TCA-SpMM, the Tensor-Core-adapted CSR SpMM intrinsic (see intrinsics.h):
// O(i,j) = S(i,k) * D(k,j) with S in CSR of float16, D dense float16 and O
// dense float32, on the cuda target. What its host step needs: the
// preprocessing arrays and the names of its kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::lowering {

// The Intrinsic's tensors are {O, S, D}.
inline constexpr const char* kTcaSpmmIntrinsic = "tca_spmm";
inline constexpr int kTcaSpmmThreadsPerBlock = 256;  // 8 warps

// Which warps compute which rows (the paper's three arrays, one entry per
// warp), and which kernel they run.
struct TcaSpmmPlan {
  int chunksPerStep = 1;  // chunks of 8 nonzeros per MMA: 1, 2, 4 or 8 (from N)
  bool aligned = true;    // N % 8 == 0: 128-bit loads of the dense rows
  int64_t unit = 8;       // nonzeros per warp below which a row gets one warp
  int leastWarpsPerRow = 1;  // per nonempty row: > 1 spreads a small matrix's column tiles
  std::vector<int32_t> rowIdForEachWarp, numWarpsPerRow, warpidWithinRow;
  int64_t warps() const { return static_cast<int64_t>(rowIdForEachWarp.size()); }
};

// The plan for a CSR matrix's row positions (rows + 1 of them) times a dense
// matrix of `columns` columns, on a device that holds `targetWarps` warps
// at a time (a few per SM).
TcaSpmmPlan planTcaSpmm(const int64_t* pos, int rows, int columns, int64_t targetWarps);

// The kernel a plan runs, in the device code of the call with `prefix`.
std::string tcaSpmmKernelName(const std::string& prefix, int chunksPerStep, bool aligned);

// The NVRTC-ready device code of a call with `prefix`: every kernel a plan
// may name (bench/tca_spmm's tuner compiles variants of it).
std::string tcaSpmmDeviceCode(const std::string& prefix);

}  // namespace tcc::lowering
