// The top level of the DSL: splits a file into declarations, statements,
// schedule blocks and target lines, parses each with the grammar, and
// recovers after a syntax error at the next line so that every error in a
// file is reported.
#pragma once

#include <vector>

#include "source_file.h"
#include "syntax_tree.h"
#include "tcc/frontend/diagnostic.h"

namespace tcc::frontend {

struct ParsedFile {
  syntax::File file;
  syntax::PositionCache positions;

  explicit ParsedFile(const SourceFile& source) : positions(source.begin(), source.end()) {}
};

// Syntax errors go to `diagnostics` in source order; the result holds
// every item that parsed.
ParsedFile parseSyntax(const SourceFile& source, std::vector<Diagnostic>& diagnostics);

}  // namespace tcc::frontend
