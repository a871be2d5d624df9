// Which device an MPI rank computes on (the node-local rank modulo the
// node's device count, or TCC_CUDA_DEVICE), and how many OpenMP threads a
// CPU rank takes: the rules alone, on any machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "distributed_sum.h"
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

}  // namespace
}  // namespace tcc::permanent_test
