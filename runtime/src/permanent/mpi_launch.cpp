// Whether an MPI launcher started this process, from the environment alone
// (so a plain run neither loads nor starts anything for MPI).
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_launch.h"
#include "tcc/runtime/distributed.h"

namespace tcc::rt {

bool launchedByMpi() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK"); }

int chooseDevice(int localRank, int deviceCount, const char* setting) {
  const int rank = std::max(0, localRank);
  if (!setting || !*setting) return deviceCount > 0 ? rank % deviceCount : -1;
  const std::string text = setting;
  std::vector<std::string> entries;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    entries.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string& entry = entries[static_cast<size_t>(rank) % entries.size()];
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("TCC_CUDA_DEVICE is '" + text + "': " + why +
                                 "; expected a device number, 'none', or a comma-separated list of them");
  };
  if (entry == "none") return -1;
  if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos || entry.size() > 6)
    throw bad("'" + entry + "' is not a device number");
  const int device = std::stoi(entry);
  if (device >= deviceCount)
    throw bad("device " + entry + " is not visible here (" + std::to_string(deviceCount) +
              (deviceCount == 1 ? " device" : " devices") + ")");
  return device;
}

int deviceForRank(const RankPlacement& placement, int deviceCount) {
  return chooseDevice(placement.localRank, deviceCount, std::getenv("TCC_CUDA_DEVICE"));
}

namespace permanent {

int launchedRanks() {
  if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE")) return std::max(1, std::atoi(size));
  if (const char* rank = std::getenv("PMIX_RANK")) return std::atoi(rank) > 0 ? 2 : 1;  // at least
  return 1;
}

}  // namespace permanent
}  // namespace tcc::rt
