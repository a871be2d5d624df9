// NVRTC sources of the three GPU permanent kernels (Elbek and Kaya):
//
//  - GPU-SparsePerman (the baseline): one generic kernel; the CSC and each
//    thread's x live in shared memory, zero row sums are counted and skip
//    the product;
//  - CodeGen-PureReg: generated per matrix; x_0..x_{n-1} are named
//    variables (registers), each column has an inclusion and an exclusion
//    device function that adds or subtracts its values, injected as
//    constants, to the row sums it touches;
//  - CodeGen-Hybrid: generated per matrix after permanent ordering and
//    partitioning (ryser_problem.h): the first r_k row sums in registers,
//    the rest in global memory laid out so a warp's accesses coalesce
//    (row i of block b's thread k at globalRows[(b (n - r_k) + i - r_k) 256 + k]:
//    constant offsets from one pointer, so no register holds an address),
//    and their product kept until a column >= k flips; and (ours) the
//    product of the rows an unrolled block does not touch kept per block,
//    in levels, and column 0 summed out in pairs of steps. Which partition,
//    pairs, unrolled block and register cap: hybrid_plan.h.
//
// Every kernel has the same parameters and runs one thread per
// power-of-two slice of a chunk (Lemma 1: the threads of a warp then flip
// the same column at every step but the first two):
//
//   tcc_perm_sum(const long long* chunks, unsigned long long chunkSize,
//                int logThreadsPerChunk, long long threads, double* partials,
//                double* globalRows, const int* columnStart, const int* rows,
//                const double* values, const double* start, int n)
//
// Thread t sums (-1)^g prod_i x_i(g) over its slice into partials[t];
// tcc_perm_reduce(partials, threadsPerChunk, chunkCount, chunkSums) adds
// each chunk's slices (compensated). The generated kernels ignore the CSC
// parameters (their values are in the code); only Hybrid uses globalRows.
#pragma once

#include <string>

#include "ryser_problem.h"

namespace tcc::rt::permanent::gpu {

inline constexpr const char* kSumKernel = "tcc_perm_sum";
inline constexpr const char* kReduceKernel = "tcc_perm_reduce";
// The block size of the generated kernels (their launch bounds and the
// layout of Hybrid's global rows).
inline constexpr int kGeneratedThreadsPerBlock = 256;

// The baseline's shared memory per block of `threadsPerBlock` threads.
size_t baselineSharedBytes(int n, int nonzeros, int threadsPerBlock);

std::string baselineKernelSource();
// `unroll`: a power of two that divides every thread's slice (at most
// kMaxUnroll; 1 for slices of one step): the generated loop runs blocks of
// that many steps whose columns and signs are known but one.
inline constexpr int kMaxUnroll = 32;
// PureReg's (and a knob-set Hybrid's): blocks of 32 steps were faster than
// 16 and 8 at every density of the n = 40 set on the H100.
inline constexpr int kDefaultUnroll = 32;
// chainDispatch: the block's last flip chosen by if-tests, the most
// frequent column first (column log2 unroll at half the blocks), instead of
// a switch.
std::string pureRegKernelSource(const RyserProblem& problem, int unroll, bool chainDispatch = true);
// blockProduct: multiply, at the steps inside an unrolled block, only the
// rows the block's columns (< log2 unroll) touch, the first ones after
// permanent ordering, times the product of the other rows (the register
// rest and the global part) kept from the block's last step: the paper's
// globalProduct reuse carried over to the register rows.
// sliceBits: every thread's slice has at most 2^sliceBits steps, so
// columns >= sliceBits flip only at a thread's start, and the rows only
// they touch (rows liveRowsOf(problem, sliceBits).., after permanent
// ordering) are multiplied once per thread.
// productLevels (with blockProduct): the rows the block's columns touch go
// in levels by the first of those columns that touches them, each level's
// product times the next level's kept, so a flip of column c multiplies
// levels c .. 0 again (level 0 alone at half the steps).
// pairs (with productLevels, unroll >= 4): column 0 summed out in pairs of
// steps g, g + 1 (g even), which add +-(product of the other rows)
// (prod x_i - prod z_i) over column 0's rows, z_i = x_i + a_i0. With
// kPairsKeepingSums each such row keeps z_i in a register (a flip of
// column 0 costs nothing, other columns update both sums); with
// kPairsFormingSums a pair forms the z_i as it multiplies (no registers).
inline constexpr int kNoPairs = 0, kPairsKeepingSums = 1, kPairsFormingSums = 2;
// minBlocks > 0: __launch_bounds__(256, minBlocks), registers capped at
// 65536 / (256 minBlocks) per thread. chainDispatch: as for PureReg.
std::string hybridKernelSource(const RyserProblem& problem, const Partition& partition, int unroll, int sliceBits,
                               bool blockProduct = true, bool productLevels = true, int pairs = kPairsKeepingSums,
                               int minBlocks = 0, bool chainDispatch = false);
// What a step of the Hybrid kernel costs on average (its set-up left out),
// counted from the structure the generator emits.
struct KernelCost {
  double additions = 0, multiplications = 0;  // float64, per step (a fused multiply-add counts once)
  double globalAccesses = 0;                  // per step
  double perStep = 0;                         // the sum, global accesses weighted by globalAccessCost
  int liveDoubles = 0;                        // doubles a thread keeps across the loop (estimate)
};
KernelCost hybridKernelCost(const RyserProblem& problem, const Partition& partition, int unroll, int sliceBits,
                            int pairs, double globalAccessCost);
// PureReg's, every row multiplied at every step (what the compiler shares
// between the unrolled steps not counted).
KernelCost pureRegKernelCost(const RyserProblem& problem, int unroll, int sliceBits);
// Whether the Hybrid kernel for these settings sums column 0 out in pairs.
bool hybridUsesPairs(const RyserProblem& problem, const Partition& partition, int unroll, bool blockProduct,
                     bool productLevels);
// Rows 0..liveRowsOf-1: those the columns that flip inside a slice touch.
int liveRowsOf(const RyserProblem& problem, int sliceBits);

}  // namespace tcc::rt::permanent::gpu
