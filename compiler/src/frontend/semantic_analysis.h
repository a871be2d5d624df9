// The semantic pass: walks a parsed file in order, declares tensors and
// formats, builds each statement as tensor index notation, checks the
// schedule and the target, and reports every error it finds.
#pragma once

#include <vector>

#include "parser.h"
#include "source_file.h"
#include "tcc/frontend/program.h"

namespace tcc::frontend {

// `hasSyntaxErrors` says some lines failed to parse, so names they may
// have declared are not reported as undeclared.
Program analyzeProgram(const SourceFile& source, const ParsedFile& parsed,
                       std::vector<Diagnostic>& diagnostics, bool hasSyntaxErrors);

}  // namespace tcc::frontend
