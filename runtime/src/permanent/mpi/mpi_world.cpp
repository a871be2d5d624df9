#include "mpi_world.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../distributed_sum.h"
#include "tcc/runtime/distributed.h"

namespace tcc::rt {
namespace {

RankPlacement livePlacement;
bool live = false;
MPI_Comm communicator = MPI_COMM_NULL;
MPI_Comm node = MPI_COMM_NULL;  // this node's ranks
int threadLevel = MPI_THREAD_SINGLE;

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed: " + mpiErrorText(code));
}

}  // namespace

bool builtWithMpi() { return true; }

DistributedScope::DistributedScope() {
  if (!launchedByMpi()) return;
  if (live) throw std::runtime_error("a DistributedScope is already open in this process");
  int already = 0;
  MPI_Initialized(&already);
  if (already) {
    MPI_Query_thread(&threadLevel);  // the program started MPI itself: use it, leave finalising to it
  } else {
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &threadLevel), "MPI_Init_thread");
    finalise_ = true;
  }
  check(MPI_Comm_dup(MPI_COMM_WORLD, &communicator), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(communicator, MPI_ERRORS_RETURN);
  MPI_Comm_rank(communicator, &placement_.rank);
  MPI_Comm_size(communicator, &placement_.size);
  // The node-local rank picks a rank's device (deviceForRank): the ranks
  // that share memory with this one, whatever the launcher.
  check(MPI_Comm_split_type(communicator, MPI_COMM_TYPE_SHARED, placement_.rank, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  MPI_Comm_rank(node, &placement_.localRank);
  MPI_Comm_size(node, &placement_.localSize);
  livePlacement = placement_;
  live = opened_ = true;
}

DistributedScope::~DistributedScope() {
  if (!opened_) return;
  MPI_Comm_free(&node);
  MPI_Comm_free(&communicator);
  communicator = node = MPI_COMM_NULL;
  live = false;
  livePlacement = {};
  if (finalise_) MPI_Finalize();
}

RankPlacement currentPlacement() { return live ? livePlacement : RankPlacement{}; }

void announceDevice(int device) {
  if (!live) return;
  int mine = device >= 0 ? 1 : 0, onNode = 0;
  check(MPI_Allreduce(&mine, &onNode, 1, MPI_INT, MPI_SUM, node), "MPI_Allreduce (devices on the node)");
  livePlacement.device = device;
  livePlacement.localGpuRanks = onNode;
}

namespace permanent {

bool distributedRunActive() { return live && livePlacement.size > 1; }
MPI_Comm permanentCommunicator() { return communicator; }
bool anyThreadMayCallMpi() { return threadLevel >= MPI_THREAD_SERIALIZED; }

}  // namespace permanent
}  // namespace tcc::rt
