// The schedule AST: the commands of a `schedule { ... }` block, checked
// against the table of known commands but not applied (the scheduling
// stage does that).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tcc/frontend/diagnostic.h"
#include "tcc/ir/index_expr.h"

namespace tcc::frontend {

struct ScheduleArgument {
  enum class Kind {
    Identifier,  // an index variable, tensor name or option: `i0`, `CPUThread`, `B`
    Integer,     // `32`
    Keyword,     // `policy = hash`: keyword plus an identifier or integer value
    Expression,  // an access or expression: `B(i,k)` in pos, `B(i,k) * C(k,j)` in precompute
    IndexList,   // `{i, j}`: precompute's workspace indices
  };
  Kind kind = Kind::Identifier;
  std::string keyword;     // Keyword only: the name left of '='
  std::string identifier;  // Identifier, or a Keyword's identifier value
  std::vector<std::string> identifiers;  // IndexList, or the one Identifier of an index-list parameter
  std::int64_t integer = 0;  // Integer, or a Keyword's integer value
  bool valueIsInteger = false;  // Keyword only: which of the two holds the value
  // Expression only: built over the program's tensors and index variables.
  std::optional<ir::IndexExpr> expression;
  std::string text;  // the argument as written
  SourceLocation location;
};

struct ScheduleCommand {
  std::string name;
  std::vector<ScheduleArgument> arguments;
  SourceLocation location;
};

// What one argument position of a command accepts.
enum class ScheduleParameterKind {
  IndexVariable,     // an index variable that exists at this point
  NewIndexVariable,  // a fresh name the command introduces
  IndexVariableOrNew,  // either (precompute's workspace index may reuse the index)
  Integer,           // a positive integer
  Tensor,            // a declared tensor
  Access,            // an access of a declared tensor, like B(i,k)
  Expression,        // a subexpression of a statement
  IndexVariables,    // an index variable or a list `{i, j}` of them that exist
  IndexVariablesOrNew,  // the same, each existing or new
  Workspace,         // a tensor declared in a sparse_workspace(...) format
  Choice,            // one identifier of `choices`
};

struct ScheduleParameter {
  std::string name;  // for messages: "factor", "parallel unit", ...
  ScheduleParameterKind kind;
  std::vector<std::string> choices;  // Choice only
};

struct ScheduleKeyword {
  std::string name;
  bool integerValue = false;         // else an identifier
  std::vector<std::string> choices;  // identifier values allowed; empty means any name
};

// One row of the command table.
struct ScheduleCommandSpec {
  std::string name;
  std::vector<ScheduleParameter> required;
  std::vector<ScheduleParameter> optional;  // may follow the required ones, in order
  bool variadic = false;                    // the last required parameter repeats
  std::vector<ScheduleKeyword> keywords;    // `keyword = value` arguments, after positionals
  std::string signature;                    // "split(index, outer, inner, factor)"
};

// Every schedule command of the DSL, in the order the design lists them.
const std::vector<ScheduleCommandSpec>& scheduleCommandTable();
const ScheduleCommandSpec* findScheduleCommand(const std::string& name);

}  // namespace tcc::frontend
