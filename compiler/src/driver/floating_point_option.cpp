// --fp strict|fast, shared by the commands that compile.
#include "commands.h"

namespace tcc::driver {

const char* const kFloatingPointHelp =
    "Floating-point mode: strict (the default: no FMA contraction, sums in loop order, so every backend and run "
    "gives the same bits; on the cuda target no contraction and each sum in the one order its kernel fixes, the "
    "same bits every run, the intrinsics excepted) or fast (FMA, reassociated and vectorized scalar sums, the host's full vector width; last bits "
    "may differ; inf and NaN still propagate). Overrides the program's `fp` line";

void addFloatingPointOption(CLI::App* command, std::string& mode) {
  command->add_option("--fp", mode, kFloatingPointHelp)->check(CLI::IsMember({"strict", "fast"}));
}

std::optional<frontend::FloatingPointMode> floatingPointOption(const std::string& mode) {
  if (mode.empty()) return std::nullopt;
  return frontend::parseFloatingPointMode(mode);
}

}  // namespace tcc::driver
