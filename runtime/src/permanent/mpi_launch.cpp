// Whether an MPI launcher started this process, from the environment alone
// (so a plain run neither loads nor starts anything for MPI).
#include <algorithm>
#include <cstdlib>

#include "mpi_launch.h"
#include "tcc/runtime/distributed.h"

namespace tcc::rt {

bool launchedByMpi() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK"); }

namespace permanent {

int launchedRanks() {
  if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE")) return std::max(1, std::atoi(size));
  if (const char* rank = std::getenv("PMIX_RANK")) return std::atoi(rank) > 0 ? 2 : 1;  // at least
  return 1;
}

}  // namespace permanent
}  // namespace tcc::rt
