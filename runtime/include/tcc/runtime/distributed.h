// Permanents over MPI ranks. Started by mpirun, a program that opens a
// DistributedScope splits each permanent (p = perm(A)) it computes over all
// ranks: rank 0 hands out chunks of the iteration range on request, every
// rank sums its chunks with the engine for its device, and rank 0 adds the
// partial sums (compensated in floating point, exactly in exact mode) and
// sends the result to all ranks. Progress and the checkpoint file are rank
// 0's alone. Every rank must compute the same permanents in the same order.
//
// `tcc run` opens the scope itself. MPI is optional at build time; without
// it (or outside mpirun) the scope is one rank and changes nothing.
#pragma once

namespace tcc::rt {

struct RankPlacement {
  int rank = 0, size = 1;            // in MPI_COMM_WORLD
  int localRank = 0, localSize = 1;  // among the ranks on this node
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

}  // namespace tcc::rt
