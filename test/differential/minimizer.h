// Greedy test-case reduction: drops schedule commands, top-level terms and
// sub-expressions (and with them tensors), simplifies formats and the
// element type, shrinks shapes and removes or simplifies entries, keeping
// each change only while `stillFails` holds. Every candidate keeps at
// least one input with a nonzero entry.
#pragma once

#include <functional>

#include "case_model.h"

namespace tcc::differential {

struct MinimizeOptions {
  int maxAttempts = 500;  // candidates checked, in all
  double maxSeconds = 180;
};

struct MinimizeResult {
  Case reduced;
  int attempts = 0;
  int accepted = 0;
};

MinimizeResult minimize(const Case& failing, const std::function<bool(const Case&)>& stillFails,
                        const MinimizeOptions& options = {});

}  // namespace tcc::differential
