// Ctrl-C during a permanent: while a scope lives, SIGINT only sets a flag
// that the chunk loops check, so the run stops cleanly (and checkpoints).
#pragma once

#include <atomic>

namespace tcc::rt::permanent {

class InterruptScope {
 public:
  InterruptScope();   // installs the handler (the first of nested scopes), clears the flag
  ~InterruptScope();  // puts the previous handler back (the last one)
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  static const std::atomic<bool>& flag();
};

}  // namespace tcc::rt::permanent
