// Turns a format as written (`csr`, `{dense, compressed} order (1,0)`,
// `nm(2,4,1)`, a name declared with `format`) into an ir::Format for a
// tensor of a given order, reporting what does not fit.
#pragma once

#include <optional>
#include <string>

#include "semantic_context.h"
#include "syntax_tree.h"
#include "tcc/ir/format.h"

namespace tcc::frontend {

// `tensorName` is only for messages. Returns nullopt after reporting.
std::optional<ir::Format> resolveFormat(SemanticContext& context, const syntax::FormatSpec& spec,
                                        int order, const std::string& tensorName);

// Checks a `format name = ...` declaration on its own; level lists are
// checked fully, named formats only for being known.
bool checkFormatDeclaration(SemanticContext& context, const syntax::FormatDeclaration& declaration);

// `sparse_workspace(policy = NAME, capacity = N, pipeline = on|off,
// double_buffer = on|off) [order (...)]`: the format of a workspace tensor
// that precompute(expr, i_vars, o_vars, W) fills (an ISM workspace whose
// coordinates are sorted in the mode order given, its output order).
struct WorkspaceFormat {
  std::vector<int> modeOrdering;  // level l sorts mode modeOrdering[l]
  std::string policy;             // empty: tcc's rule picks one
  SourceLocation policyLocation;
  std::int64_t capacity = 0;      // 0: the default
  bool pipelining = false, doubleBuffering = false;
};
bool isWorkspaceFormat(const syntax::FormatSpec& spec);
// Reports what does not fit (an order outside 1..4, a zero capacity, an
// unknown keyword); nullopt after reporting.
std::optional<WorkspaceFormat> resolveWorkspaceFormat(SemanticContext& context, const syntax::FormatSpec& spec,
                                                      int order, const std::string& tensorName);

// dense, sparse, csr, csc, dcsr, dcsc, coo, csf and nm.
bool isBuiltinFormatName(const std::string& name);

// Parses digits into a 64-bit integer; nullopt (after reporting) when out
// of range.
std::optional<std::int64_t> integerValue(SemanticContext& context, const syntax::Integer& integer);

}  // namespace tcc::frontend
