// Entry points into the Spirit X3 grammar, one per construct the top-level
// parser dispatches on. The X3 templates stay inside grammar*.cpp; callers
// see only these functions.
#pragma once

#include <string>

#include "syntax_tree.h"

namespace tcc::frontend::grammar {

// Where parsing stands: text from position to end; positions of tagged
// nodes go into the cache.
struct Cursor {
  const char* begin;  // of the whole text
  const char* position;
  const char* end;
  syntax::PositionCache& positions;
};

struct SyntaxError {
  const char* position = nullptr;
  std::string message;  // "expected ...", without location
};

// Each parses one construct after optional whitespace and comments. On
// success the cursor moves past the construct (not past what follows it);
// on failure the cursor stays and `error` says where and what was expected.
bool parseTensorDeclaration(Cursor& cursor, syntax::TensorDeclaration& result, SyntaxError& error);
bool parseFormatDeclaration(Cursor& cursor, syntax::FormatDeclaration& result, SyntaxError& error);
bool parseTargetDeclaration(Cursor& cursor, syntax::TargetDeclaration& result, SyntaxError& error);
bool parseFloatingPointDeclaration(Cursor& cursor, syntax::FloatingPointDeclaration& result,
                                   SyntaxError& error);
bool parseStatement(Cursor& cursor, syntax::Statement& result, SyntaxError& error);
bool parseScheduleCommand(Cursor& cursor, syntax::ScheduleCommand& result, SyntaxError& error);

// Where an error found at `where` should point: the culprit token on the
// same line, or the end of the last line with code when the parser had
// already skipped to a later line looking for what was missing.
const char* errorPosition(const char* where, const char* begin, const char* end);

// Deepest nesting of parentheses, unary minus, sum and calls an expression
// may have; deeper input is an error rather than a stack overflow.
constexpr int kMaxExpressionNesting = 64;

}  // namespace tcc::frontend::grammar
