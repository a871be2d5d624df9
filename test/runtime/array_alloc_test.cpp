// The runtime's array allocator (tcc/runtime/array_alloc.h) and the
// MallocArray that uses it: large arrays 2 MB-aligned and advised
// MADV_HUGEPAGE (the mapping's "hg" flag in /proc/self/smaps), small ones
// and a threshold of 0 plain malloc; contents kept when they grow; zeroed
// when asked, even over reused memory; failures that return NULL and leave
// the old array alone; every array freed with free().
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "tcc/runtime/malloc_array.h"
#include "tcc/runtime/tensor.h"

namespace tcc::rt {
namespace {

constexpr long long kMB = 1LL << 20;
constexpr long long kMin = TCC_HUGE_PAGE_DEFAULT_MIN_BYTES;

bool alignedTo2MB(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % (2 * kMB) == 0; }

// The VmFlags of the mapping that holds `address` ("" where there is none,
// or no smaps).
std::string vmFlagsAt(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long from = 0, to = 0;
    char dash = 0;
    std::istringstream fields(line);
    if (line.find(':') > line.find(' ') && (fields >> std::hex >> from >> dash >> to) && dash == '-') {
      inside = from <= at && at < to;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return "";
}
bool advisedHuge(const void* address) { return vmFlagsAt(address).find(" hg ") != std::string::npos; }

// Whether this kernel has transparent huge pages at all (madvise then
// succeeds and sets the flag).
bool systemHasHugePages() {
#if defined(__linux__)
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  return enabled.good();
#else
  return false;
#endif
}

class HugePageThreshold : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = hugePageMinBytes(); }
  void TearDown() override { setHugePageMinBytes(saved_); }

 private:
  int64_t saved_ = 0;
};

TEST(ArrayAlloc, LargeArraysAre2MBAlignedAndAdvised) {
  for (long long bytes : {kMin, kMin + 1, 9 * kMB + 12345}) {
    auto* array = static_cast<unsigned char*>(tcc_array_alloc(bytes, kMin));
    ASSERT_NE(array, nullptr);
#if defined(__linux__)
    EXPECT_TRUE(alignedTo2MB(array)) << bytes;
    if (systemHasHugePages()) EXPECT_TRUE(advisedHuge(array)) << bytes << ": " << vmFlagsAt(array);
#endif
    // Every byte asked for is usable, the last one included.
    std::memset(array, 0x5a, static_cast<size_t>(bytes));
    EXPECT_EQ(array[bytes - 1], 0x5a);
    std::free(array);
  }
}

TEST(ArrayAlloc, SmallArraysAndAZeroThresholdAreLeftToMalloc) {
  EXPECT_FALSE(tcc_array_is_huge(kMin - 1, kMin));
  EXPECT_FALSE(tcc_array_is_huge(64 * kMB, 0));
  EXPECT_FALSE(tcc_array_is_huge(64 * kMB, -1));
#if defined(__linux__)
  EXPECT_TRUE(tcc_array_is_huge(kMin, kMin));
#endif
  // With no threshold (0 and negative: never) a large array is malloc's,
  // in a mapping of its own that nothing advised. (Above glibc's largest
  // mmap threshold, 32 MB: smaller arrays may come from the heap, where
  // memory freed by an earlier large array keeps its advice.)
  for (long long minBytes : {0LL, -1LL}) {
    auto* array = static_cast<unsigned char*>(tcc_array_alloc(64 * kMB, minBytes));
    ASSERT_NE(array, nullptr);
    std::memset(array, 1, static_cast<size_t>(64 * kMB));
    EXPECT_FALSE(advisedHuge(array)) << "threshold " << minBytes << ": " << vmFlagsAt(array);
    std::free(array);
  }
  // Small arrays are usable and freed with free().
  for (long long bytes : {kMin - 1, 100LL}) {
    auto* array = static_cast<unsigned char*>(tcc_array_alloc(bytes, kMin));
    ASSERT_NE(array, nullptr);
    std::memset(array, 1, static_cast<size_t>(bytes));
    EXPECT_EQ(array[bytes - 1], 1);
    std::free(array);
  }
  // No bytes: still an array (one byte), as malloc(1).
  void* empty = tcc_array_alloc(0, kMin);
  EXPECT_NE(empty, nullptr);
  std::free(empty);
}

TEST(ArrayAlloc, ZeroedArraysAreZeroOverReusedMemory) {
  // The first array is dirtied and freed; the zeroed one that follows may
  // reuse its memory.
  const long long bytes = 6 * kMB;
  for (long long minBytes : {kMin, 0LL}) {
    auto* dirty = static_cast<unsigned char*>(tcc_array_alloc(bytes, minBytes));
    ASSERT_NE(dirty, nullptr);
    std::memset(dirty, 0xff, static_cast<size_t>(bytes));
    std::free(dirty);
    auto* zeroed = static_cast<unsigned char*>(tcc_array_alloc_zeroed(bytes, minBytes));
    ASSERT_NE(zeroed, nullptr);
    long long nonzero = 0;
    for (long long k = 0; k < bytes; ++k) nonzero += zeroed[k] != 0;
    EXPECT_EQ(nonzero, 0) << "threshold " << minBytes;
#if defined(__linux__)
    if (minBytes > 0) EXPECT_TRUE(alignedTo2MB(zeroed));
#endif
    std::free(zeroed);
  }
}

TEST(ArrayAlloc, GrowingKeepsTheKeptBytesAndMovesLargeArraysTo2MBPages) {
  // From nothing, through small sizes (realloc), past the threshold (a new
  // array in 2 MB pages and a copy) and further, then back below it.
  unsigned char* array = nullptr;
  long long kept = 0;
  for (long long bytes : {1000LL, 3 * kMB, kMin + 4096, 11 * kMB, 20 * kMB, 2 * kMB}) {
    auto* grown = static_cast<unsigned char*>(tcc_array_realloc(array, kept, bytes, kMin));
    ASSERT_NE(grown, nullptr) << bytes;
    const long long still = kept < bytes ? kept : bytes;
    for (long long k = 0; k < still; ++k)
      ASSERT_EQ(grown[k], static_cast<unsigned char>(k % 251)) << "byte " << k << " after growing to " << bytes;
#if defined(__linux__)
    if (bytes >= kMin) {
      EXPECT_TRUE(alignedTo2MB(grown)) << bytes;
      if (systemHasHugePages()) EXPECT_TRUE(advisedHuge(grown)) << bytes;
    }
#endif
    for (long long k = still; k < bytes; ++k) grown[k] = static_cast<unsigned char>(k % 251);
    array = grown;
    kept = bytes;
  }
  std::free(array);
  // A kept size beyond the new size is cut to it.
  auto* source = static_cast<unsigned char*>(tcc_array_alloc(kMin, kMin));
  ASSERT_NE(source, nullptr);
  std::memset(source, 7, static_cast<size_t>(kMin));
  auto* moved = static_cast<unsigned char*>(tcc_array_realloc(source, kMin, kMin + 1, kMin));
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved[kMin - 1], 7);
  std::free(moved);
}

TEST(ArrayAlloc, RefusedSizesReturnNullAndLeaveTheArrayAlone) {
  // More than any machine has: posix_memalign refuses, and so does the
  // malloc it falls back to.
  const long long impossible = 1LL << 62;
  EXPECT_EQ(tcc_array_alloc(impossible, kMin), nullptr);
  EXPECT_EQ(tcc_array_alloc_zeroed(impossible, kMin), nullptr);
  auto* array = static_cast<unsigned char*>(tcc_array_alloc(64, kMin));
  ASSERT_NE(array, nullptr);
  std::memset(array, 3, 64);
  EXPECT_EQ(tcc_array_realloc(array, 64, impossible, kMin), nullptr);
  EXPECT_EQ(tcc_array_realloc(array, 64, impossible, 0), nullptr);
  for (int k = 0; k < 64; ++k) ASSERT_EQ(array[k], 3);
  std::free(array);
}

TEST_F(HugePageThreshold, MallocArraysFollowTheRuntimeThreshold) {
  setHugePageMinBytes(kMin);
  MallocArray<double> large(kMin / 8 + 10, 1.5);
  MallocArray<double> small(1000, 2.5);
#if defined(__linux__)
  EXPECT_TRUE(alignedTo2MB(large.data()));
  if (systemHasHugePages()) EXPECT_TRUE(advisedHuge(large.data()));
#endif
  EXPECT_EQ(small[999], 2.5);
  EXPECT_EQ(large[large.size() - 1], 1.5);
  // Pushing past the threshold moves the array, contents kept.
  MallocArray<int32_t> pushed;
  for (int32_t k = 0; k < 3 * 1024 * 1024; ++k) pushed.push_back(k);
  for (int32_t k = 0; k < pushed.size(); k += 4099) ASSERT_EQ(pushed[k], k);
  EXPECT_EQ(pushed[pushed.size() - 1], 3 * 1024 * 1024 - 1);
#if defined(__linux__)
  EXPECT_TRUE(alignedTo2MB(pushed.data()));
#endif
  // A copy is a new array of the same size: in 2 MB pages too.
  MallocArray<double> copy = large;
  EXPECT_NE(copy.data(), large.data());
  EXPECT_EQ(copy[copy.size() - 1], 1.5);
#if defined(__linux__)
  EXPECT_TRUE(alignedTo2MB(copy.data()));
#endif
  // Released, the buffer is the caller's, freed with free().
  const int64_t size = large.size();
  double* released = large.release();
  EXPECT_EQ(released[size - 1], 1.5);
  std::free(released);

  setHugePageMinBytes(0);
  MallocArray<double> off(40 * kMB / 8, 1.5);  // above glibc's mmap thresholds: a mapping of its own
  EXPECT_FALSE(advisedHuge(off.data())) << vmFlagsAt(off.data());
  EXPECT_EQ(hugePageMinBytes(), 0);
  setHugePageMinBytes(-5);
  EXPECT_EQ(hugePageMinBytes(), 0);
}

TEST_F(HugePageThreshold, TensorsBuiltByTheLibraryTakeTheThreshold) {
  setHugePageMinBytes(kMin);
  Tensor dense({1024, 1024}, TensorFormat::dense(2));  // 8 MB of values
  EXPECT_EQ(dense.nnz(), 1024 * 1024);
#if defined(__linux__)
  EXPECT_TRUE(alignedTo2MB(dense.valuesData()));
#endif
  EXPECT_EQ(dense.valueAt({1023, 1023}), 0.0);
  setHugePageMinBytes(0);
  Tensor plain({2048, 2560}, TensorFormat::dense(2));  // 40 MB
  EXPECT_FALSE(advisedHuge(plain.valuesData()));
}

}  // namespace
}  // namespace tcc::rt
