#include "interrupt.h"

#include <csignal>
#include <mutex>

namespace tcc::rt::permanent {
namespace {

std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

std::mutex installMutex;
int activeScopes = 0;
struct sigaction previousAction;

extern "C" void onInterrupt(int) { interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

InterruptScope::InterruptScope() {
  std::lock_guard lock(installMutex);
  if (activeScopes++ > 0) return;
  interrupted.store(false);
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previousAction);
}

InterruptScope::~InterruptScope() {
  std::lock_guard lock(installMutex);
  if (--activeScopes > 0) return;
  sigaction(SIGINT, &previousAction, nullptr);
}

const std::atomic<bool>& InterruptScope::flag() { return interrupted; }

}  // namespace tcc::rt::permanent
