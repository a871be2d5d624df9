// What the semantic checks share while they walk one file: the names
// declared so far and where errors go.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "source_file.h"
#include "syntax_tree.h"
#include "tcc/frontend/diagnostic.h"
#include "tcc/ir/format.h"
#include "tcc/ir/index_var.h"
#include "tcc/ir/tensor_var.h"

namespace tcc::frontend {

struct DeclaredTensor {
  ir::TensorVar tensor;
  SourceLocation location;
  bool isWorkspace = false;  // declared in a sparse_workspace(...) format
};

struct DeclaredFormat {
  const syntax::FormatSpec* spec;
  SourceLocation location;
};

class SemanticContext {
 public:
  SemanticContext(const SourceFile& source, const syntax::PositionCache& positions,
                  std::vector<Diagnostic>& diagnostics, bool hasSyntaxErrors)
      : source(source), positions(positions), diagnostics(diagnostics),
        hasSyntaxErrors(hasSyntaxErrors) {}

  void error(const syntax::x3::position_tagged& node, std::string message);
  void error(const char* where, std::string message);
  // Errors about names that are not declared are left out when a line
  // failed to parse: the declaration may have been on that line.
  void undeclaredError(const syntax::x3::position_tagged& node, std::string message);

  const char* positionOf(const syntax::x3::position_tagged& node) const;
  SourceLocation locate(const syntax::x3::position_tagged& node) const;
  std::string textOf(const syntax::x3::position_tagged& node) const;  // as written

  const SourceFile& source;
  const syntax::PositionCache& positions;
  std::vector<Diagnostic>& diagnostics;
  const bool hasSyntaxErrors;

  std::map<std::string, DeclaredTensor> tensors;
  std::vector<ir::TensorVar> tensorsInOrder;
  std::map<std::string, DeclaredFormat> formats;
  // Index variables by name, shared by all statements and the schedule.
  std::map<std::string, ir::IndexVar> indexVars;
  // The names schedule commands introduced (split's outer and inner, ...).
  std::set<std::string> scheduleIndexVars;
};

// Words that cannot name a tensor, format or index variable.
bool isReservedWord(const std::string& name);
// "line:column" of a location, for messages that point elsewhere.
std::string lineAndColumn(const SourceLocation& location);

}  // namespace tcc::frontend
