// Wrong results tcc is known to compute while their fixes are open. A
// mismatch that fits one of these is reported as known rather than failing
// the randomized suites; TCC_DIFFERENTIAL_STRICT=1 (or --strict) counts
// them as failures too. Remove an entry when its fix is merged.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "case_model.h"
#include "checker.h"

namespace tcc::differential {

// The open bug a failing case shows, if it fits one. `check` runs a
// variant of the case (used to tell whether a schedule command is to blame).
std::optional<std::string> knownOpenBug(const Case& failing, const Verdict& verdict,
                                        const std::function<Verdict(const Case&)>& check);

bool strictMode();

}  // namespace tcc::differential
