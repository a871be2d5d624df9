// Which device an MPI rank computes on (the node-local rank modulo the
// node's device count, or TCC_CUDA_DEVICE), how many OpenMP threads a CPU
// rank takes, and how rank 0 sizes the grants of ranks of different speeds:
// the rules alone, on any machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "distributed_sum.h"
#include "mpi/chunk_ledger.h"
#include "permanent_test_support.h"
#include "tcc/runtime/tensor_format.h"
#include "tcc/runtime/distributed.h"

namespace tcc::permanent_test {
namespace {

using ::testing::HasSubstr;

std::string refusalOf(int localRank, int devices, const char* setting) {
  try {
    const int device = rt::chooseDevice(localRank, devices, setting);
    return "(device " + std::to_string(device) + ")";
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
}

TEST(PermanentRankDevice, TheRanksOfANodeSpreadOverItsDevices) {
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_EQ(rt::chooseDevice(rank, 2, nullptr), rank % 2) << rank;
    EXPECT_EQ(rt::chooseDevice(rank, 8, ""), rank) << rank;
    EXPECT_EQ(rt::chooseDevice(rank, 1, nullptr), 0) << rank;  // all share the one GPU
    EXPECT_EQ(rt::chooseDevice(rank, 3, nullptr), rank % 3) << rank;
  }
}

TEST(PermanentRankDevice, ANodeWithoutDevicesLeavesItsRanksOnTheCpu) {
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(rt::chooseDevice(rank, 0, nullptr), -1);
    EXPECT_EQ(rt::chooseDevice(rank, 0, "none"), -1);
  }
}

TEST(PermanentRankDevice, TheSettingOverridesTheRule) {
  for (int rank = 0; rank < 6; ++rank) {
    EXPECT_EQ(rt::chooseDevice(rank, 2, "1"), 1);  // every rank on device 1
    EXPECT_EQ(rt::chooseDevice(rank, 2, "none"), -1);
  }
  const int spread[] = {0, 0, 1, 1, 0, 0};
  for (int rank = 0; rank < 6; ++rank) EXPECT_EQ(rt::chooseDevice(rank, 2, "0,0,1,1"), spread[rank]) << rank;
  EXPECT_EQ(rt::chooseDevice(0, 2, "0,1,none"), 0);
  EXPECT_EQ(rt::chooseDevice(1, 2, "0,1,none"), 1);
  EXPECT_EQ(rt::chooseDevice(2, 2, "0,1,none"), -1);  // a CPU rank beside two GPU ranks
  EXPECT_EQ(rt::chooseDevice(2, 0, "none,none,none"), -1);
}

TEST(PermanentRankDevice, ABadSettingIsRefusedWithTheReason) {
  EXPECT_THAT(refusalOf(0, 2, "gpu1"), HasSubstr("TCC_CUDA_DEVICE is 'gpu1': 'gpu1' is not a device number"));
  EXPECT_THAT(refusalOf(0, 2, "-1"), HasSubstr("'-1' is not a device number"));
  EXPECT_THAT(refusalOf(1, 2, "0,,1"), HasSubstr("'' is not a device number"));
  EXPECT_THAT(refusalOf(0, 2, "2"), HasSubstr("device 2 is not visible here (2 devices)"));
  EXPECT_THAT(refusalOf(3, 0, "0"), HasSubstr("device 0 is not visible here (0 devices)"));
  EXPECT_THAT(refusalOf(0, 2, "7"), HasSubstr("expected a device number, 'none', or a comma-separated list"));
  EXPECT_EQ(refusalOf(0, 2, "0,5"), "(device 0)");  // entries other ranks take are checked by those ranks
}

TEST(PermanentRankThreads, CpuRanksShareTheNodesCoresLessOnePerGpuRank) {
  namespace perm = rt::permanent;
  EXPECT_EQ(perm::threadsForCpuRank(32, 32, 1, 0), 32);
  EXPECT_EQ(perm::threadsForCpuRank(32, 32, 2, 0), 16);
  EXPECT_EQ(perm::threadsForCpuRank(32, 32, 4, 0), 8);
  EXPECT_EQ(perm::threadsForCpuRank(32, 32, 3, 2), 30);  // two GPU ranks keep a core each
  EXPECT_EQ(perm::threadsForCpuRank(32, 32, 6, 2), 7);   // 30 cores over 4 CPU ranks
  EXPECT_EQ(perm::threadsForCpuRank(2, 2, 4, 0), 1);     // at least one
  EXPECT_EQ(perm::threadsForCpuRank(2, 2, 2, 1), 1);
  // Bound by mpirun: the cores it gave the rank.
  EXPECT_EQ(perm::threadsForCpuRank(1, 32, 2, 0), 1);
  EXPECT_EQ(perm::threadsForCpuRank(8, 32, 4, 0), 8);
}

// Rank 0 (an engine of 64 chunks at once, fast) and rank 1 (4 at once,
// about a hundred times slower): the slow rank gets work while the fast one
// needs longer for the rest than the slow one for a chunk, then none; the
// fast one is never refused, grants are whole batches of the rank's engine,
// and every chunk is granted once.
TEST(PermanentChunkLedger, ASlowRankGetsWorkOnlyWhileItCannotHoldUpTheEnd) {
  namespace perm = rt::permanent;
  rt::Tensor tensor = toTensor(randomSparse(20, 0.3, 3), rt::TensorFormat::csc());
  const perm::SortedColumnMatrix matrix = perm::readSortedColumnMatrix(tensor.abiView());
  const rt::PermanentOptions options;
  perm::ChunkLedger<double> ledger(matrix, "float", options, {64, 4});
  ledger.resume();
  const int64_t chunks = ledger.plan().chunks;
  auto record = [&](int rank, const std::vector<int64_t>& batch) {
    for (int64_t chunk : batch) ledger.record(rank, chunk, perm::ChunkOutcome<double>{1.0, false, false});
  };
  // Speeds not known yet: one engine's worth each.
  const std::vector<int64_t> slow = ledger.grant(1);
  const std::vector<int64_t> fast = ledger.grant(0);
  EXPECT_EQ(slow.size(), 4u);
  EXPECT_EQ(fast.size(), 64u);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  record(0, fast);  // about 10^4 chunks per second
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  record(1, slow);  // about 13 chunks per second: 0.3 s a chunk
  // The slow rank asks while nearly everything is left (the fast rank has
  // shown only 64 chunks in 0.3 s): a share in proportion to its speed.
  const std::vector<int64_t> second = ledger.grant(1);
  EXPECT_GE(second.size(), 4u);
  EXPECT_LT(second.size(), 400u);
  int64_t granted = 68 + static_cast<int64_t>(second.size()), refusedAt = -1;
  std::vector<int64_t> slowHolds = second;
  // The fast rank now runs through the rest; the slow one asks again each
  // time (its chunks still in hand) and is refused once the fast one would
  // finish sooner than it finishes a chunk.
  for (;;) {
    const std::vector<int64_t> batch = ledger.grant(0);
    if (batch.empty()) break;
    granted += static_cast<int64_t>(batch.size());
    EXPECT_TRUE(batch.size() % 64 == 0 || granted == chunks) << batch.size();  // whole batches of its engine
    record(0, batch);
    if (refusedAt < 0) {
      const std::vector<int64_t> more = ledger.grant(1);
      if (more.empty()) refusedAt = chunks - granted;
      granted += static_cast<int64_t>(more.size());
      slowHolds.insert(slowHolds.end(), more.begin(), more.end());
    }
  }
  record(1, slowHolds);
  EXPECT_EQ(granted, chunks);  // the fast rank is never refused while chunks are left
  EXPECT_EQ(ledger.completed(), chunks);
  EXPECT_GT(refusedAt, 0);  // refused before the end
  EXPECT_LT(static_cast<int64_t>(slowHolds.size()), chunks / 10);
}

}  // namespace
}  // namespace tcc::permanent_test
