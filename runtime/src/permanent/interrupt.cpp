#include "interrupt.h"

#include <csignal>
#include <mutex>

namespace tcc::rt::permanent {
namespace {

std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

std::mutex installMutex;
int activeScopes = 0, terminateScopes = 0;
struct sigaction previousAction, previousTerminateAction;

extern "C" void onInterrupt(int) { interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

InterruptScope::InterruptScope(bool alsoTerminate) : terminate_(alsoTerminate) {
  std::lock_guard lock(installMutex);
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  if (terminate_ && terminateScopes++ == 0) sigaction(SIGTERM, &action, &previousTerminateAction);
  if (activeScopes++ > 0) return;
  interrupted.store(false);
  sigaction(SIGINT, &action, &previousAction);
}

InterruptScope::~InterruptScope() {
  std::lock_guard lock(installMutex);
  if (terminate_ && --terminateScopes == 0) sigaction(SIGTERM, &previousTerminateAction, nullptr);
  if (--activeScopes > 0) return;
  sigaction(SIGINT, &previousAction, nullptr);
}

const std::atomic<bool>& InterruptScope::flag() { return interrupted; }

}  // namespace tcc::rt::permanent
