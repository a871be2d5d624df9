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
//    (row i of thread t at globalRows[(i - r_k) * threads + t]), and their
//    product kept until a column >= k flips.
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

// The baseline's shared memory per block of `threadsPerBlock` threads.
size_t baselineSharedBytes(int n, int nonzeros, int threadsPerBlock);

std::string baselineKernelSource();
std::string pureRegKernelSource(const RyserProblem& problem);
std::string hybridKernelSource(const RyserProblem& problem, const Partition& partition);

}  // namespace tcc::rt::permanent::gpu
