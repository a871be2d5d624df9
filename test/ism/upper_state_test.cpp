// The kernel entry points of the ISM runtime (kernel_api.h) clear the upper
// halves of the vector registers that a caller compiled with AVX may leave
// dirty (tcc/runtime/upper_state.h): each call below starts with them dirty
// and ends, back in this baseline x86-64 code, with them in their initial
// state. XGETBV(1) reports which register states are in use (bit 2: the
// upper halves of the ymm registers); where the CPU or a hypervisor does not
// show the dirty state, the test is skipped.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "tcc/ism/kernel_api.h"

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

bool xgetbv1Supported() {
  if (!__builtin_cpu_supports("avx")) return false;
  unsigned eax, ebx, ecx, edx;
  __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0xD), "c"(1));
  return (eax & (1u << 2)) != 0;
}

uint64_t registerStatesInUse() {
  uint32_t low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(1));
  return (static_cast<uint64_t>(high) << 32) | low;
}

constexpr uint64_t kYmmUpperHalves = 1u << 2;

__attribute__((target("avx"))) void dirtyUpperHalves() {
  __asm__ volatile("vpcmpeqd %%ymm7, %%ymm7, %%ymm7" ::: "xmm7");
}

// The state after `call` made with dirty upper halves; the call runs once
// before, so that lazy binding of the symbol is not what is measured.
bool upperHalvesCleanAfter(const std::function<void()>& call) {
  call();
  dirtyUpperHalves();
  call();
  return (registerStatesInUse() & kYmmUpperHalves) == 0;
}

class UpperState : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!xgetbv1Supported()) GTEST_SKIP() << "no AVX or no XGETBV(1) on this CPU";
    dirtyUpperHalves();
    if ((registerStatesInUse() & kYmmUpperHalves) == 0) GTEST_SKIP() << "the dirty state is not visible here";
    const int dims[2] = {50, 60};
    const int levelOrder[2] = {0, 1};
    workspace_ = tcc_ism_kernel_create(2, dims, levelOrder, 0, 0, 0, 0);
    ASSERT_NE(workspace_, nullptr);
  }
  void TearDown() override {
    if (workspace_) tcc_ism_kernel_destroy(workspace_);
  }
  void* workspace_ = nullptr;
};

TEST_F(UpperState, TheProbeSeesDirtyUpperHalves) {
  dirtyUpperHalves();
  EXPECT_NE(registerStatesInUse() & kYmmUpperHalves, 0u);
}

TEST_F(UpperState, InsertsClearThem) {
  int c = 0;
  for (const char* policy : {"bucket", "hash", "coord", "map", "vector"}) {
    SCOPED_TRACE(policy);
    const std::string name = policy;
    auto insert = [&] {
      ++c;
      if (name == "bucket") tcc_ism_insert_bucket_2(workspace_, c % 50, c % 60, 1.0);
      if (name == "hash") tcc_ism_insert_hash_2(workspace_, c % 50, c % 60, 1.0);
      if (name == "coord") tcc_ism_insert_coord_2(workspace_, c % 50, c % 60, 1.0);
      if (name == "map") tcc_ism_insert_map_2(workspace_, c % 50, c % 60, 1.0);
      if (name == "vector") tcc_ism_insert_vector_2(workspace_, c % 50, c % 60, 1.0);
    };
    EXPECT_TRUE(upperHalvesCleanAfter(insert));
  }
}

TEST_F(UpperState, DrainClearsThem) {
  tcc_ism_insert_bucket_2(workspace_, 3, 4, 2.0);
  EXPECT_TRUE(upperHalvesCleanAfter([&] { EXPECT_EQ(tcc_ism_kernel_drain(workspace_), 0); }));
}

#endif

}  // namespace
