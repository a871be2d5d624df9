// The DSL grammar in Boost.Spirit X3. Rules carry human-readable names
// because an expectation failure reports the name of the rule it expected:
// "expected a tensor name".
#include "grammar.h"

#include <algorithm>

#include <boost/fusion/include/adapt_struct.hpp>
#include <boost/spirit/home/x3.hpp>
#include <boost/spirit/home/x3/support/ast/position_tagged.hpp>

BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Identifier, name)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Integer, digits)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::FormatTerm, name, arguments)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::LevelList, levels)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::ModeOrder, modes)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::FormatSpec, base, order)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::TensorDeclaration, name, dimensions, format,
                          elementType)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::FormatDeclaration, name, format)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::TargetDeclaration, kind, architecture)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Access, tensor, indices)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Number, text)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Summation, index, body)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Call, function, arguments)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Negation, operand)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Operation, op, operand)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Expression, first, rest)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::Statement, output, assignment, value)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::KeywordArgument, keyword, value)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::IndexTuple, indices)
BOOST_FUSION_ADAPT_STRUCT(tcc::frontend::syntax::ScheduleCommand, name, arguments)

namespace tcc::frontend::grammar {
namespace {

namespace x3 = boost::spirit::x3;
using namespace syntax;

struct position_cache_tag;
struct nesting_depth_tag;

// Records the source range of every position_tagged node a rule produces.
struct annotate_position {
  template <typename Iterator, typename Node, typename Context>
  void on_success(Iterator const& first, Iterator const& last, Node& node, Context const& context) {
    x3::get<position_cache_tag>(context).get().annotate(node, first, last);
  }
};

struct NestingTooDeep {
  const char* position;
};

// Passes its subject through, counting how deeply it has recursed.
template <typename Subject>
struct nesting_guard : x3::unary_parser<Subject, nesting_guard<Subject>> {
  using base_type = x3::unary_parser<Subject, nesting_guard<Subject>>;
  static bool const is_pass_through_unary = true;
  static bool const handles_container = Subject::handles_container;

  constexpr nesting_guard(Subject const& subject) : base_type(subject) {}

  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const& context, RContext& rcontext,
             Attribute& attribute) const {
    int& depth = x3::get<nesting_depth_tag>(context).get();
    if (depth >= kMaxExpressionNesting) throw NestingTooDeep{first};
    ++depth;
    struct Restore {
      int& depth;
      ~Restore() { --depth; }
    } restore{depth};
    return this->subject.parse(first, last, context, rcontext, attribute);
  }
};

struct nesting_guard_generator {
  template <typename Subject>
  constexpr nesting_guard<typename x3::extension::as_parser<Subject>::value_type> operator[](
      Subject const& subject) const {
    return {x3::as_parser(subject)};
  }
};
constexpr nesting_guard_generator guard_nesting{};

// Only ASCII classes: the standard encoding's classifiers assert on bytes
// above 127, and comments may hold UTF-8.
auto const identifier_start = x3::char_("a-zA-Z_");
auto const identifier_char = x3::char_("a-zA-Z0-9_");
auto const digit = x3::char_("0-9");
auto const skipper = x3::char_(" \t\r\n") | x3::lexeme['#' >> *(~x3::char_('\n'))];

auto keyword(char const* word) { return x3::lexeme[x3::lit(word) >> !identifier_char]; }

// ---- rules ---------------------------------------------------------------
// A few rules are the same grammar under different names, so that a
// failure says what was expected in that place.

x3::rule<struct identifier_class, Identifier> const identifier = "a name";
x3::rule<struct tensor_name_class, Identifier> const tensor_name = "a tensor name";
x3::rule<struct index_name_class, Identifier> const index_name = "an index variable";
x3::rule<struct format_name_class, Identifier> const format_name = "a format name";
x3::rule<struct type_name_class, Identifier> const type_name = "an element type";
x3::rule<struct target_name_class, Identifier> const target_name = "a target ('cpu' or 'cuda')";
x3::rule<struct fp_mode_name_class, Identifier> const fp_mode_name =
    "a floating-point mode ('strict' or 'fast')";
x3::rule<struct architecture_class, Identifier> const architecture =
    "a GPU architecture like sm_90";
x3::rule<struct architecture_clause_class, Identifier> const architecture_clause =
    "a GPU architecture in parentheses";
x3::rule<struct command_name_class, Identifier> const command_name = "a schedule command";
x3::rule<struct integer_class, Integer> const integer = "an integer";
x3::rule<struct name_or_integer_class, NameOrInteger> const name_or_integer = "a name or an integer";
x3::rule<struct dimension_class, NameOrInteger> const dimension = "a size name or an integer";
x3::rule<struct format_arguments_class, std::vector<FormatArgument>> const format_arguments =
    "format arguments";
x3::rule<struct format_argument_class, FormatArgument> const format_argument = "a format argument";
x3::rule<struct index_tuple_class, IndexTuple> const index_tuple = "a list of index variables like {i, j}";
x3::rule<struct dimension_list_class, std::vector<NameOrInteger>> const dimension_list =
    "a list of sizes";
x3::rule<struct index_list_class, std::vector<Identifier>> const index_list =
    "a list of index variables";
// A list's items under the name of one item: a list that fails on its
// first item says what that item is (a bare `x % ','` has no name of its
// own, and Spirit would describe it by its C++ type).
x3::rule<struct dimension_items_class, std::vector<NameOrInteger>> const dimension_items =
    "a size name or an integer";
x3::rule<struct index_name_items_class, std::vector<Identifier>> const index_name_items = "an index variable";
x3::rule<struct level_term_items_class, std::vector<FormatTerm>> const level_term_items = "a level format";
x3::rule<struct integer_items_class, std::vector<Integer>> const integer_items = "an integer";
x3::rule<struct call_argument_items_class, std::vector<x3::forward_ast<Expression>>> const call_argument_items =
    "an expression";
x3::rule<struct close_paren_class> const close_paren = "',' or ')'";
x3::rule<struct close_brace_class> const close_brace = "',' or '}'";
x3::rule<struct format_term_class, FormatTerm> const format_term = "a format";
x3::rule<struct level_term_class, FormatTerm> const level_term = "a level format";
x3::rule<struct level_list_class, LevelList> const level_list = "a list of level formats";
x3::rule<struct mode_order_class, ModeOrder> const mode_order = "a mode order";
x3::rule<struct format_spec_class, FormatSpec> const format_spec = "a format";
x3::rule<struct tensor_declaration_class, TensorDeclaration> const tensor_declaration =
    "a tensor declaration";
x3::rule<struct format_declaration_class, FormatDeclaration> const format_declaration =
    "a format declaration";
x3::rule<struct target_declaration_class, TargetDeclaration> const target_declaration =
    "a target";
x3::rule<struct fp_declaration_class, Identifier> const fp_declaration =
    "a floating-point mode line";

x3::rule<struct number_class, Number> const number = "a number";
x3::rule<struct access_class, Access> const access = "a tensor access";
x3::rule<struct summation_class, Summation> const summation = "sum(index, expression)";
x3::rule<struct call_class, Call> const call = "a builtin call";
x3::rule<struct negation_class, Negation> const negation = "a negation";
x3::rule<struct parenthesized_class, Expression> const parenthesized = "a parenthesized expression";
x3::rule<struct primary_class, Operand> const primary = "an operand";
x3::rule<struct factor_class, Operand> const factor = "an operand";
x3::rule<struct multiplicative_operation_class, Operation> const multiplicative_operation =
    "an operator";
x3::rule<struct additive_operation_class, Operation> const additive_operation = "an operator";
x3::rule<struct term_class, Expression> const term = "an expression";
x3::rule<struct expression_class, Expression> const expression = "an expression";
x3::rule<struct assignment_class, std::string> const assignment = "'=' or '+='";
x3::rule<struct statement_class, Statement> const statement = "a statement";

x3::rule<struct keyword_argument_class, KeywordArgument> const keyword_argument =
    "a keyword argument";
x3::rule<struct schedule_argument_class, ScheduleArgument> const schedule_argument =
    "a schedule argument";
x3::rule<struct schedule_command_class, ScheduleCommand> const schedule_command =
    "a schedule command";

// The spelling of a name, digits or number; single-member nodes take their
// text through these string rules.
x3::rule<struct name_text_class, std::string> const name_text = "a name";
x3::rule<struct digits_text_class, std::string> const digits_text = "an integer";
x3::rule<struct number_text_class, std::string> const number_text = "a number";
auto const name_text_def = x3::lexeme[identifier_start >> *identifier_char];
auto const digits_text_def = x3::lexeme[+digit >> !identifier_char];

auto const identifier_def = name_text;
auto const tensor_name_def = name_text;
auto const index_name_def = name_text;
auto const format_name_def = name_text;
auto const type_name_def = name_text;
auto const target_name_def = name_text;
auto const fp_mode_name_def = name_text;
auto const architecture_def = name_text;
auto const command_name_def = name_text;
auto const integer_def = digits_text;
auto const name_or_integer_def = identifier | integer;
auto const dimension_def = identifier | integer;

// ---- formats and declarations --------------------------------------------

auto const close_paren_def = x3::lit(')');
auto const close_brace_def = x3::lit('}');
auto const format_arguments_def = '(' > -(format_argument % ',') > close_paren;
auto const format_argument_def = keyword_argument | name_or_integer;
auto const dimension_items_def = dimension % ',';
auto const dimension_list_def = '(' > dimension_items > close_paren;
auto const index_name_items_def = index_name % ',';
auto const index_list_def = '(' > index_name_items > close_paren;
auto const format_term_def = identifier >> -format_arguments;
auto const level_term_def = identifier >> -format_arguments;
auto const level_term_items_def = level_term % ',';
auto const level_list_def = '{' > level_term_items > close_brace;
auto const integer_items_def = integer % ',';
auto const mode_order_def = keyword("order") > '(' > integer_items > close_paren;
auto const format_spec_def = (level_list | format_term) >> -mode_order;

auto const tensor_declaration_def = keyword("tensor") >> x3::expect[tensor_name] >>
                                    -dimension_list >>
                                    -(':' > format_spec) >> -(keyword("of") > type_name);
auto const format_declaration_def = keyword("format") > format_name > '=' > format_spec;
auto const architecture_clause_def = '(' > architecture > ')';
auto const target_declaration_def =
    keyword("target") >> x3::expect[target_name] >> -architecture_clause;
// The mode must be on the keyword's line (the skipper would cross lines).
auto const fp_declaration_def = x3::lexeme[keyword("fp") >> *(x3::lit(' ') | x3::lit('\t')) > fp_mode_name];

// ---- expressions ---------------------------------------------------------

auto const exponent = x3::char_("eE") >> -x3::char_("+-") >> +digit;
auto const number_text_def =
    x3::raw[x3::lexeme[(+digit >> -('.' >> *digit) | '.' >> +digit) >> -exponent >>
                       !identifier_char]];
auto const number_def = number_text;
auto const builtin_name =
    x3::lexeme[(x3::string("perm") | x3::string("abs") | x3::string("sqrt") |
                x3::string("exp") | x3::string("max") | x3::string("min")) >>
               !identifier_char];

auto const access_def = tensor_name >> -index_list;
auto const summation_def = keyword("sum") > '(' > index_name > ',' > expression > ')';
auto const call_argument_items_def = expression % ',';
auto const call_def = (builtin_name >> '(') > call_argument_items > close_paren;
auto const negation_def = '-' > factor;
auto const parenthesized_def = '(' > expression > ')';
auto const primary_def = number | summation | call | parenthesized | access;
auto const factor_def = guard_nesting[negation | primary];
auto const multiplicative_operation_def = x3::char_("*/") > factor;
auto const term_def = factor >> *multiplicative_operation;
// '+' not followed by '=', so that `a + = b` is not read as `a += b`.
auto const additive_operation_def = (x3::char_('-') | (x3::char_('+') >> !x3::lit('='))) > term;
auto const expression_def = term >> *additive_operation;
auto const assignment_def = x3::string("+=") | x3::string("=");
auto const statement_def = access > assignment > expression;

// ---- schedule ------------------------------------------------------------

auto const keyword_argument_def = identifier >> '=' >> name_or_integer;
auto const index_tuple_def = '{' > index_name_items > close_brace;
auto const schedule_argument_def = keyword_argument | index_tuple | expression;
auto const schedule_command_def = command_name > '(' > -(schedule_argument % ',') > close_paren;

BOOST_SPIRIT_DEFINE(name_text, digits_text, number_text, close_paren, close_brace)
BOOST_SPIRIT_DEFINE(dimension_items, index_name_items, level_term_items, integer_items)
BOOST_SPIRIT_DEFINE(identifier, tensor_name, index_name, format_name, type_name, target_name,
                    architecture, architecture_clause, command_name, integer, name_or_integer, dimension, format_arguments, format_argument,
                    dimension_list, index_list, format_term,
                    level_term, level_list, mode_order, format_spec, tensor_declaration,
                    format_declaration, target_declaration, fp_mode_name, fp_declaration)
BOOST_SPIRIT_DEFINE(number, access, summation, call_argument_items, call, negation, parenthesized, primary, factor,
                    multiplicative_operation, term, additive_operation, expression, assignment,
                    statement, keyword_argument, index_tuple, schedule_argument, schedule_command)

// Every rule records positions.
#define TCC_ANNOTATED(name) \
  struct name##_class : annotate_position {};
TCC_ANNOTATED(identifier)
TCC_ANNOTATED(tensor_name)
TCC_ANNOTATED(index_name)
TCC_ANNOTATED(format_name)
TCC_ANNOTATED(type_name)
TCC_ANNOTATED(target_name)
TCC_ANNOTATED(fp_mode_name)
TCC_ANNOTATED(architecture)
TCC_ANNOTATED(command_name)
TCC_ANNOTATED(integer)
TCC_ANNOTATED(format_term)
TCC_ANNOTATED(level_term)
TCC_ANNOTATED(level_list)
TCC_ANNOTATED(mode_order)
TCC_ANNOTATED(format_spec)
TCC_ANNOTATED(tensor_declaration)
TCC_ANNOTATED(format_declaration)
TCC_ANNOTATED(target_declaration)
TCC_ANNOTATED(number)
TCC_ANNOTATED(access)
TCC_ANNOTATED(summation)
TCC_ANNOTATED(call)
TCC_ANNOTATED(negation)
TCC_ANNOTATED(parenthesized)
TCC_ANNOTATED(multiplicative_operation)
TCC_ANNOTATED(term)
TCC_ANNOTATED(additive_operation)
TCC_ANNOTATED(expression)
TCC_ANNOTATED(statement)
TCC_ANNOTATED(keyword_argument)
TCC_ANNOTATED(index_tuple)
TCC_ANNOTATED(schedule_command)
#undef TCC_ANNOTATED

template <typename Rule, typename Attribute>
bool parseWith(Rule const& rule, Cursor& cursor, Attribute& result, SyntaxError& error) {
  int depth = 0;
  auto const parser = x3::with<position_cache_tag>(std::ref(cursor.positions))
      [x3::with<nesting_depth_tag>(std::ref(depth))[rule]];
  const char* first = cursor.position;
  try {
    if (x3::phrase_parse(first, cursor.end, parser, skipper, result,
                         x3::skip_flag::dont_post_skip)) {
      cursor.position = first;
      return true;
    }
    const char* start = cursor.position;
    x3::skip_over(start, cursor.end, x3::make_context<x3::skipper_tag>(skipper));
    error = {start, std::string("expected ") + rule.name};
  } catch (const x3::expectation_failure<const char*>& failure) {
    const char* where = errorPosition(failure.where(), cursor.begin, cursor.end);
    error = {where, "expected " + failure.which()};
    // A list stops before a ',' that nothing follows; the closer then finds
    // that ','. What is missing is the item after it.
    if (where != cursor.end && *where == ',' && failure.which().find("',' or") == 0) {
      const char* item = errorPosition(where + 1, cursor.begin, cursor.end);
      error = {item, "expected another item after ','"};
    }
  } catch (const NestingTooDeep& tooDeep) {
    error = {tooDeep.position, "expression nested too deeply (more than " +
                                   std::to_string(kMaxExpressionNesting) + " levels)"};
  }
  return false;
}

}  // namespace

const char* errorPosition(const char* where, const char* begin, const char* end) {
  auto isBlank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  const char* back = where;
  while (true) {
    while (back != begin && isBlank(back[-1])) --back;
    const char* lineStart = back;
    while (lineStart != begin && lineStart[-1] != '\n') --lineStart;
    const char* comment = std::find(lineStart, back, '#');  // '#' only starts comments
    if (comment == back) break;
    back = comment;
  }
  if (std::find(back, where, '\n') != where) return back;
  while (where != end && (*where == ' ' || *where == '\t' || *where == '\r')) ++where;
  return where;
}

bool parseTensorDeclaration(Cursor& cursor, TensorDeclaration& result, SyntaxError& error) {
  return parseWith(tensor_declaration, cursor, result, error);
}
bool parseFormatDeclaration(Cursor& cursor, FormatDeclaration& result, SyntaxError& error) {
  return parseWith(format_declaration, cursor, result, error);
}
bool parseTargetDeclaration(Cursor& cursor, TargetDeclaration& result, SyntaxError& error) {
  return parseWith(target_declaration, cursor, result, error);
}
// The line is one name after the keyword; the declaration node takes the
// mode's position, where every error about the line points.
bool parseFloatingPointDeclaration(Cursor& cursor, FloatingPointDeclaration& result, SyntaxError& error) {
  if (!parseWith(fp_declaration, cursor, result.mode, error)) return false;
  cursor.positions.annotate(result, cursor.positions.position_of(result.mode).begin(),
                            cursor.positions.position_of(result.mode).end());
  return true;
}
bool parseStatement(Cursor& cursor, Statement& result, SyntaxError& error) {
  return parseWith(statement, cursor, result, error);
}
bool parseScheduleCommand(Cursor& cursor, ScheduleCommand& result, SyntaxError& error) {
  return parseWith(schedule_command, cursor, result, error);
}

}  // namespace tcc::frontend::grammar
