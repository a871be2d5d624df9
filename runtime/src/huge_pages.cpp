// The process-wide threshold of 2 MB pages for the runtime's arrays (see
// tcc/runtime/malloc_array.h).
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "tcc/runtime/malloc_array.h"

namespace tcc::rt {

namespace {

int64_t fromEnvironment() {
  const char* setting = std::getenv("TCC_HUGE_PAGES");
  if (setting != nullptr && (std::strcmp(setting, "0") == 0 || std::strcmp(setting, "off") == 0)) return 0;
  return TCC_HUGE_PAGE_DEFAULT_MIN_BYTES;
}

std::atomic<int64_t>& threshold() {
  static std::atomic<int64_t> bytes{fromEnvironment()};
  return bytes;
}

}  // namespace

int64_t hugePageMinBytes() { return threshold().load(std::memory_order_relaxed); }

void setHugePageMinBytes(int64_t bytes) { threshold().store(bytes < 0 ? 0 : bytes, std::memory_order_relaxed); }

}  // namespace tcc::rt
