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

// dense, sparse, csr, csc, dcsr, dcsc, coo, csf and nm.
bool isBuiltinFormatName(const std::string& name);

// Parses digits into a 64-bit integer; nullopt (after reporting) when out
// of range.
std::optional<std::int64_t> integerValue(SemanticContext& context, const syntax::Integer& integer);

}  // namespace tcc::frontend
