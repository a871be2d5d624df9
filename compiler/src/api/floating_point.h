// The program's floating-point mode as the C++ backend takes it.
#pragma once

#include "tcc/frontend/program.h"
#include "tcc/lowering/codegen.h"

namespace tcc::detail {

inline lowering::FloatingPointMode toLowering(frontend::FloatingPointMode mode) {
  return mode == frontend::FloatingPointMode::Fast ? lowering::FloatingPointMode::Fast
                                                   : lowering::FloatingPointMode::Strict;
}

}  // namespace tcc::detail
