// The CUDA backend behind the CodeGenerator interface (see codegen.h).
#pragma once

#include <memory>

#include "tcc/lowering/codegen.h"

namespace tcc::lowering {

std::unique_ptr<CodeGenerator> makeCudaCodeGenerator(FloatingPointMode floatingPoint);

}  // namespace tcc::lowering
