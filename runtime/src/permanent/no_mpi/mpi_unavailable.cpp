// This tcc was built without MPI: one rank, and a clear error when mpirun
// started several.
#include <stdexcept>
#include <string>

#include "../distributed_sum.h"
#include "../mpi_launch.h"
#include "tcc/runtime/distributed.h"

namespace tcc::rt {

bool builtWithMpi() { return false; }

DistributedScope::DistributedScope() {
  if (launchedByMpi() && permanent::launchedRanks() > 1)
    throw std::runtime_error(
        "this tcc was built without MPI (no MPI was found when it was configured), so it cannot share work over the "
        "ranks mpirun started; run it without mpirun, or rebuild it with OpenMPI installed (libopenmpi-dev)");
}

DistributedScope::~DistributedScope() = default;

RankPlacement currentPlacement() { return {}; }
void announceDevice(int) {}

namespace permanent {

bool distributedRunActive() { return false; }

template <typename Sum>
Sum distributedSumOfChunks(const SortedColumnMatrix&, const char*, const PermanentOptions&, RangeEngine<Sum>&) {
  throw PermanentError("perm: this tcc was built without MPI");
}

template double distributedSumOfChunks<double>(const SortedColumnMatrix&, const char*, const PermanentOptions&,
                                               RangeEngine<double>&);
template Int128 distributedSumOfChunks<Int128>(const SortedColumnMatrix&, const char*, const PermanentOptions&,
                                               RangeEngine<Int128>&);

}  // namespace permanent
}  // namespace tcc::rt
