// Permanents over MPI ranks. Started by mpirun, a program that opens a
// DistributedScope splits each permanent (p = perm(A)) it computes over all
// ranks: rank 0 hands out chunks of the iteration range on request, every
// rank sums its chunks with the engine for its device, and rank 0 adds the
// partial sums (compensated in floating point, exactly in exact mode) and
// sends the result to all ranks. Progress and the checkpoint file are rank
// 0's alone. Every rank must compute the same permanents in the same order.
//
// On the cuda target each rank computes on its own GPU (deviceForRank), or
// with the CPU kernel in the GPU kernel's column order where it has none;
// rank 0 grants chunks in proportion to each rank's measured speed.
//
// `tcc run` opens the scope itself (before compiling, for the cuda target,
// and selects the rank's device: tcc::placeOnRankDevice in tcc/tcc.h). MPI
// is optional at build time; without it (or outside mpirun) the scope is
// one rank and changes nothing.
#pragma once

namespace tcc::rt {

struct RankPlacement {
  int rank = 0, size = 1;            // in MPI_COMM_WORLD
  int localRank = 0, localSize = 1;  // among the ranks on this node (MPI_COMM_TYPE_SHARED)
  int device = -1;                   // this rank's CUDA device, once announced (-1: none)
  int localGpuRanks = 0;             // ranks on this node that announced a device
};

// Whether an MPI launcher started this process (mpirun sets
// OMPI_COMM_WORLD_SIZE, PMIx launchers PMIX_RANK); read from the
// environment, so checking costs nothing.
bool launchedByMpi();
// Whether this tcc was built with MPI.
bool builtWithMpi();

// Initialises MPI when launchedByMpi() (and finalises it at the end); else
// does nothing. Throws std::runtime_error when launched with more than one
// rank but built without MPI, or when MPI cannot start. One per process,
// on the thread that computes the permanents.
class DistributedScope {
 public:
  DistributedScope();
  ~DistributedScope();
  DistributedScope(const DistributedScope&) = delete;
  DistributedScope& operator=(const DistributedScope&) = delete;

  const RankPlacement& placement() const { return placement_; }
  bool isRoot() const { return placement_.rank == 0; }

 private:
  RankPlacement placement_;
  bool opened_ = false;    // this scope set MPI up for permanents
  bool finalise_ = false;  // and started MPI, so finalises it
};

// The live scope's placement; one rank when there is none.
RankPlacement currentPlacement();

// The CUDA device a rank of the cuda target computes on, or -1 for none
// (the rank then sums its chunks with the OpenMP CPU kernel). By default
// the node-local rank modulo the node's device count, so the ranks of a
// node spread over its GPUs and several share one when there are more
// ranks than GPUs; -1 on a node without GPUs. TCC_CUDA_DEVICE overrides
// it: a device number (every rank on that device), a comma-separated list
// (node-local rank r takes entry r modulo its length, e.g. "0,0,1,1"), or
// "none" (no GPU; in a list, that rank alone). CUDA_VISIBLE_DEVICES still
// decides which devices a process sees and how they are numbered.
int deviceForRank(const RankPlacement& placement, int deviceCount);
// Tells the node's ranks which of them compute on a GPU (`device` >= 0),
// so that the CPU ranks share the node's cores among themselves: a
// collective that every rank of the live scope calls once, after choosing
// its device (nothing without a scope).
void announceDevice(int device);
// The same rule with the setting given (nullptr or "": unset). Throws
// std::invalid_argument for a setting that is not a device, "none" or a
// list of them, or that names a device beyond deviceCount.
int chooseDevice(int localRank, int deviceCount, const char* setting);

}  // namespace tcc::rt
