// The syntax tree of a DSL file as the grammar produces it: nothing
// resolved or checked yet. Nodes that diagnostics point at derive from
// position_tagged; a PositionCache maps them back to their source text.
#pragma once

#include <boost/optional.hpp>
#include <boost/spirit/home/x3/support/ast/position_tagged.hpp>
#include <boost/spirit/home/x3/support/ast/variant.hpp>

#include <string>
#include <variant>
#include <vector>

namespace tcc::frontend::syntax {

namespace x3 = boost::spirit::x3;

using PositionCache = x3::position_cache<std::vector<const char*>>;

struct Identifier : x3::position_tagged {
  std::string name;
};

// Digits as written; the semantic pass checks the range.
struct Integer : x3::position_tagged {
  std::string digits;
};

struct NameOrInteger : x3::variant<Identifier, Integer> {
  using base_type::base_type;
  using base_type::operator=;
};

// policy = hash
struct KeywordArgument : x3::position_tagged {
  Identifier keyword;
  NameOrInteger value;
};

// A format's argument: `nonunique`, `4`, or `capacity = 1024`.
struct FormatArgument : x3::variant<KeywordArgument, NameOrInteger> {
  using base_type::base_type;
  using base_type::operator=;
};

// `csr`, `compressed(nonunique)`, `nm(2,4,1)`,
// `sparse_workspace(policy = coord)`: a named format or a level format,
// with optional arguments.
struct FormatTerm : x3::position_tagged {
  Identifier name;
  boost::optional<std::vector<FormatArgument>> arguments;
};

// `{dense, compressed}`
struct LevelList : x3::position_tagged {
  std::vector<FormatTerm> levels;
};

struct FormatBase : x3::variant<LevelList, FormatTerm> {
  using base_type::base_type;
  using base_type::operator=;
};

// `order (1,0)`
struct ModeOrder : x3::position_tagged {
  std::vector<Integer> modes;
};

struct FormatSpec : x3::position_tagged {
  FormatBase base;
  boost::optional<ModeOrder> order;
};

// tensor A(I, J) : csr of float32
struct TensorDeclaration : x3::position_tagged {
  Identifier name;
  boost::optional<std::vector<NameOrInteger>> dimensions;
  boost::optional<FormatSpec> format;
  boost::optional<Identifier> elementType;
};

// format blocked = {dense, dense, compressed}
struct FormatDeclaration : x3::position_tagged {
  Identifier name;
  FormatSpec format;
};

// target cpu | target cuda(sm_90)
struct TargetDeclaration : x3::position_tagged {
  Identifier kind;
  boost::optional<Identifier> architecture;
};

// fp strict | fp fast
struct FloatingPointDeclaration : x3::position_tagged {
  Identifier mode;
};

struct Expression;
struct Negation;

// `A(i,j)`, or `a` for a scalar (or a bare name in a schedule argument).
struct Access : x3::position_tagged {
  Identifier tensor;
  boost::optional<std::vector<Identifier>> indices;
};

// A numeric literal as written: `2`, `0.5`, `1e-3`.
struct Number : x3::position_tagged {
  std::string text;
};

// sum(k, body)
struct Summation : x3::position_tagged {
  Identifier index;
  x3::forward_ast<Expression> body;
};

// A builtin such as perm(A); arguments are expressions, a bare tensor
// name being an Access without indices.
struct Call : x3::position_tagged {
  Identifier function;
  std::vector<x3::forward_ast<Expression>> arguments;
};

struct Operand : x3::variant<Number, Summation, Call, Access, x3::forward_ast<Negation>,
                             x3::forward_ast<Expression>> {
  using base_type::base_type;
  using base_type::operator=;
};

struct Negation : x3::position_tagged {
  Operand operand;
};

// One `op operand` step of a left-associative chain.
struct Operation : x3::position_tagged {
  char op = '+';
  Operand operand;
};

// first op1 operand1 op2 operand2 ...: all '+'/'-' or all '*'/'/'; the
// grammar nests the tighter-binding chains as operands.
struct Expression : x3::position_tagged {
  Operand first;
  std::vector<Operation> rest;
};

// A(i,j) = B(i,k) * C(k,j)   or   A(i,j) += ...
struct Statement : x3::position_tagged {
  Access output;
  std::string assignment;  // "=" or "+="
  Expression value;
};

// `{i, j}`: index variables of precompute's workspace.
struct IndexTuple : x3::position_tagged {
  std::vector<Identifier> indices;
};

struct ScheduleArgument : x3::variant<KeywordArgument, IndexTuple, Expression> {
  using base_type::base_type;
  using base_type::operator=;
};

struct ScheduleCommand : x3::position_tagged {
  Identifier name;
  std::vector<ScheduleArgument> arguments;
};

struct ScheduleBlock {
  const char* position = nullptr;  // the `schedule` keyword
  std::vector<ScheduleCommand> commands;
};

using Item = std::variant<TensorDeclaration, FormatDeclaration, TargetDeclaration,
                          FloatingPointDeclaration, Statement, ScheduleBlock>;

struct File {
  std::vector<Item> items;  // in source order
};

}  // namespace tcc::frontend::syntax
