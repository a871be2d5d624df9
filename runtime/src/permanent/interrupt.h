// Ctrl-C during a permanent: while a scope lives, SIGINT only sets a flag
// that the chunk loops check, so the run stops cleanly (and checkpoints).
// Under mpirun, SIGTERM too: mpirun passes Ctrl-C, or the loss of a rank,
// on to the ranks as SIGTERM (and SIGKILL a moment later).
#pragma once

#include <atomic>

namespace tcc::rt::permanent {

class InterruptScope {
 public:
  // Installs the handler (the first of nested scopes), clears the flag.
  explicit InterruptScope(bool alsoTerminate = false);
  ~InterruptScope();  // puts the previous handler back (the last one)
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  static const std::atomic<bool>& flag();

 private:
  bool terminate_;
};

}  // namespace tcc::rt::permanent
