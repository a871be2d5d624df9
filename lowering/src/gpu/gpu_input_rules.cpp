#include "gpu_input_rules.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <set>
#include <variant>

#include "tcc/lowering/gpu_kernels.h"

namespace tcc::lowering::rules {

namespace imp = ir::imp;

struct Term::Node {
  struct Product {
    Term a, b;
  };
  std::variant<Statistic, int64_t, Product> value;
};

struct Condition::Node {
  struct Comparison {
    imp::BinaryOp op;
    Term a, b;
  };
  struct Both {
    Condition a, b;
  };
  struct Either {
    Condition a, b;
  };
  struct Clause {
    std::string name;
    Condition condition;
  };
  std::variant<Comparison, Both, Either, Clause> value;
};

Term::Term(Statistic statistic) : node_(std::make_shared<const Node>(Node{statistic})) {}
Term::Term(int64_t constant) : node_(std::make_shared<const Node>(Node{constant})) {}
Term operator*(const Term& a, const Term& b) {
  return Term(std::make_shared<const Term::Node>(Term::Node{Term::Node::Product{a, b}}));
}

namespace {

Condition::Node comparison(imp::BinaryOp op, const Term& a, const Term& b) {
  return Condition::Node{Condition::Node::Comparison{op, a, b}};
}

}  // namespace

Condition operator<(const Term& a, const Term& b) {
  return Condition(std::make_shared<const Condition::Node>(comparison(imp::BinaryOp::Lt, a, b)));
}
Condition operator<=(const Term& a, const Term& b) {
  return Condition(std::make_shared<const Condition::Node>(comparison(imp::BinaryOp::Le, a, b)));
}
Condition operator>(const Term& a, const Term& b) {
  return Condition(std::make_shared<const Condition::Node>(comparison(imp::BinaryOp::Gt, a, b)));
}
Condition operator>=(const Term& a, const Term& b) {
  return Condition(std::make_shared<const Condition::Node>(comparison(imp::BinaryOp::Ge, a, b)));
}
Condition operator&&(const Condition& a, const Condition& b) {
  return Condition(std::make_shared<const Condition::Node>(Condition::Node{Condition::Node::Both{a, b}}));
}
Condition operator||(const Condition& a, const Condition& b) {
  return Condition(std::make_shared<const Condition::Node>(Condition::Node{Condition::Node::Either{a, b}}));
}

namespace {

using Product = Term::Node::Product;
using Comparison = Condition::Node::Comparison;
using Both = Condition::Node::Both;
using Either = Condition::Node::Either;
using Clause = Condition::Node::Clause;

template <typename... Ts> struct Overloaded : Ts... { using Ts::operator()...; };
template <typename... Ts> Overloaded(Ts...) -> Overloaded<Ts...>;

const Clause* clauseOf(const Condition& condition) { return std::get_if<Clause>(&condition.node().value); }

// ---- C++ evaluation ----

int64_t valueOf(const Term& term, const Statistics& statistics) {
  return std::visit(Overloaded{[&](Statistic statistic) {
                                 switch (statistic) {
                                   case Statistic::Rows: return statistics.rows;
                                   case Statistic::Nonzeros: return statistics.nonzeros;
                                   case Statistic::LongestRow: return statistics.longestRow;
                                   case Statistic::Columns: return statistics.columns;
                                 }
                                 return int64_t(0);
                               },
                               [](int64_t constant) { return constant; },
                               [&](const Product& product) {
                                 return saturatingMul(valueOf(product.a, statistics), valueOf(product.b, statistics));
                               }},
                    term.node().value);
}

bool compare(imp::BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case imp::BinaryOp::Lt: return a < b;
    case imp::BinaryOp::Le: return a <= b;
    case imp::BinaryOp::Gt: return a > b;
    case imp::BinaryOp::Ge: return a >= b;
    default: assert(false && "a rule compares with <, <=, > or >="); return false;
  }
}

// ---- the host part's statements ----

// The most a term can be, in magnitude, on any input: rows and N are int32
// dimensions, nonzeros and the longest row int64 positions.
uint64_t largestOf(const Term& term) {
  constexpr uint64_t int32Max = std::numeric_limits<int32_t>::max(), int64Max = std::numeric_limits<int64_t>::max();
  return std::visit(Overloaded{[&](Statistic statistic) {
                                 return statistic == Statistic::Rows || statistic == Statistic::Columns ? int32Max
                                                                                                        : int64Max;
                               },
                               [](int64_t constant) {
                                 return constant < 0 ? uint64_t(0) - uint64_t(constant) : uint64_t(constant);
                               },
                               [&](const Product& product) {
                                 uint64_t a = largestOf(product.a), b = largestOf(product.b);
                                 return a != 0 && b > int64Max / a ? int64Max + 1 : a * b;
                               }},
                    term.node().value);
}

// Whether every clause a condition names is among `clauses` (declared
// before it: the host part's bools are declared in order).
bool declaredIn(const Condition& condition, const std::vector<Condition>& clauses) {
  return std::visit(Overloaded{[](const Comparison&) { return true; },
                               [&](const Both& both) { return declaredIn(both.a, clauses) && declaredIn(both.b, clauses); },
                               [&](const Either& either) {
                                 return declaredIn(either.a, clauses) && declaredIn(either.b, clauses);
                               },
                               [&](const Clause&) {
                                 return std::any_of(clauses.begin(), clauses.end(), [&](const Condition& clause) {
                                   return &clause.node() == &condition.node();
                                 });
                               }},
                    condition.node().value);
}

std::string nameOf(const Clause& clause, const Inputs& inputs) { return inputs.matrix + "_" + clause.name; }

imp::Expr rowsOf(const Inputs& inputs) {
  return imp::Cast::make(imp::Type::int64(),
                         imp::TensorProperty::make(inputs.matrix, imp::TensorField::Dim, 0, imp::Type::int32()));
}

imp::Expr statisticVar(Statistic statistic, const Inputs& inputs) {
  switch (statistic) {
    case Statistic::Rows: return rowsOf(inputs);
    case Statistic::Nonzeros: return imp::Var::make(inputs.matrix + "_nonzeros", imp::Type::int64());
    case Statistic::LongestRow: return imp::Var::make(inputs.matrix + "_longest_row", imp::Type::int64());
    case Statistic::Columns: return imp::Var::make(inputs.output + "_columns", imp::Type::int64());
  }
  return imp::Expr();
}

imp::Expr exprOf(const Term& term, const Inputs& inputs) {
  return std::visit(
      Overloaded{[&](Statistic statistic) { return statisticVar(statistic, inputs); },
                 [](int64_t constant) { return imp::IntImm::make(constant, imp::Type::int64()); },
                 [&](const Product& product) {
                   imp::Expr a = exprOf(product.a, inputs), b = exprOf(product.b, inputs);
                   if (largestOf(term) <= uint64_t(std::numeric_limits<int64_t>::max()))
                     return imp::Binary::make(imp::BinaryOp::Mul, a, b);
                   return imp::Call::make(kSaturatingMulCall, {a, b}, imp::Type::int64());
                 }},
      term.node().value);
}

imp::Expr exprOf(const Condition& condition, const Inputs& inputs) {
  return std::visit(
      Overloaded{[&](const Comparison& comparison) {
                   return imp::Binary::make(comparison.op, exprOf(comparison.a, inputs), exprOf(comparison.b, inputs));
                 },
                 [&](const Both& both) {
                   return imp::Binary::make(imp::BinaryOp::And, exprOf(both.a, inputs), exprOf(both.b, inputs));
                 },
                 [&](const Either& either) {
                   return imp::Binary::make(imp::BinaryOp::Or, exprOf(either.a, inputs), exprOf(either.b, inputs));
                 },
                 [&](const Clause& clause) { return imp::Var::make(nameOf(clause, inputs), imp::Type::bool_()); }},
      condition.node().value);
}

void statisticsOf(const Term& term, std::set<Statistic>& used) {
  std::visit(Overloaded{[&](Statistic statistic) { used.insert(statistic); }, [](int64_t) {},
                        [&](const Product& product) {
                          statisticsOf(product.a, used);
                          statisticsOf(product.b, used);
                        }},
             term.node().value);
}

// The statistics a condition reads, its clauses' (declared before it) aside.
void statisticsOf(const Condition& condition, std::set<Statistic>& used) {
  std::visit(Overloaded{[&](const Comparison& comparison) {
                          statisticsOf(comparison.a, used);
                          statisticsOf(comparison.b, used);
                        },
                        [&](const Both& both) {
                          statisticsOf(both.a, used);
                          statisticsOf(both.b, used);
                        },
                        [&](const Either& either) {
                          statisticsOf(either.a, used);
                          statisticsOf(either.b, used);
                        },
                        [](const Clause&) {}},
             condition.node().value);
}

// ---- the text ----

std::string textOf(const Term& term) {
  return std::visit(Overloaded{[](Statistic statistic) -> std::string {
                                 switch (statistic) {
                                   case Statistic::Rows: return "rows";
                                   case Statistic::Nonzeros: return "nonzeros";
                                   case Statistic::LongestRow: return "the longest row";
                                   case Statistic::Columns: return "N";
                                 }
                                 return "";
                               },
                               [](int64_t constant) { return std::to_string(constant); },
                               [](const Product& product) { return textOf(product.a) + " * " + textOf(product.b); }},
                    term.node().value);
}

// The clauses a text names are gathered in `named`, in the order named.
std::string textOf(const Condition& condition, const Inputs& inputs, std::vector<Condition>& named) {
  // Both inside either (and the reverse) in parentheses.
  auto operand = [&](const Condition& side, bool both) {
    std::string text = textOf(side, inputs, named);
    bool mixed = both ? std::holds_alternative<Either>(side.node().value)
                      : std::holds_alternative<Both>(side.node().value);
    return mixed ? "(" + text + ")" : text;
  };
  return std::visit(Overloaded{[&](const Comparison& comparison) {
                                 return textOf(comparison.a) + " " + imp::toString(comparison.op) + " " +
                                        textOf(comparison.b);
                               },
                               [&](const Both& both) { return operand(both.a, true) + " and " + operand(both.b, true); },
                               [&](const Either& either) {
                                 return operand(either.a, false) + " or " + operand(either.b, false);
                               },
                               [&](const Clause& clause) {
                                 if (std::none_of(named.begin(), named.end(), [&](const Condition& seen) {
                                       return &seen.node() == &condition.node();
                                     }))
                                   named.push_back(condition);
                                 return nameOf(clause, inputs);
                               }},
                    condition.node().value);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

Rule::Rule(std::string purpose, std::string otherwise) : purpose_(std::move(purpose)), otherwise_(std::move(otherwise)) {}

Condition clause(const std::string& name, const Condition& condition) {
  return Condition(std::make_shared<const Condition::Node>(Condition::Node{Clause{name, condition}}));
}

Condition Rule::clause(const std::string& name, const Condition& condition) {
  return clause(rules::clause(name, condition));
}

Condition Rule::clause(const Condition& clauseOfAnotherRule) {
  assert(clauseOf(clauseOfAnotherRule) && "a clause is declared by its name");
  assert(declaredIn(clauseOf(clauseOfAnotherRule)->condition, clauses_) && "a clause names only earlier clauses");
  clauses_.push_back(clauseOfAnotherRule);
  return clauseOfAnotherRule;
}

void Rule::choose(const Condition& when, std::string outcome) {
  assert(clauseOf(when) && declaredIn(when, clauses_) && "a choice's condition is a clause of the rule");
  choices_.push_back({when, std::move(outcome)});
}

const std::string& Rule::outcomeOf(size_t choice) const {
  return choice < choices_.size() ? choices_[choice].outcome : otherwise_;
}

bool Rule::holds(const Condition& condition, const Statistics& statistics) {
  return std::visit(Overloaded{[&](const Comparison& comparison) {
                                 return compare(comparison.op, valueOf(comparison.a, statistics),
                                                valueOf(comparison.b, statistics));
                               },
                               [&](const Both& both) { return holds(both.a, statistics) && holds(both.b, statistics); },
                               [&](const Either& either) {
                                 return holds(either.a, statistics) || holds(either.b, statistics);
                               },
                               [&](const Clause& clause) { return holds(clause.condition, statistics); }},
                    condition.node().value);
}

size_t Rule::choose(const Statistics& statistics) const {
  for (size_t choice = 0; choice < choices_.size(); ++choice)
    if (holds(choices_[choice].when, statistics)) return choice;
  return choices_.size();
}

std::vector<imp::Stmt> Rule::hostStatements(const Inputs& inputs) const {
  const imp::Type int64 = imp::Type::int64();
  std::vector<imp::Stmt> statements;
  statements.push_back(imp::Comment::make(replaced(replaced(purpose_, "{A}", inputs.matrix), "{C}", inputs.output) +
                                          " (" + text(inputs) + ")"));
  std::set<Statistic> used;
  for (const Condition& clause : clauses_) statisticsOf(clauseOf(clause)->condition, used);
  // The longest row and the nonzeros from A's pos, N from C's dimension.
  imp::Expr rows = rowsOf(inputs);
  imp::Expr pos = imp::TensorProperty::make(inputs.matrix, imp::TensorField::Pos, 1, imp::Type::pointerTo(int64));
  if (used.count(Statistic::LongestRow))
    statements.push_back(imp::Declare::make(statisticVar(Statistic::LongestRow, inputs),
                                            imp::Call::make(kLongestSegmentCall, {pos, rows}, int64)));
  if (used.count(Statistic::Nonzeros))
    statements.push_back(imp::Declare::make(
        statisticVar(Statistic::Nonzeros, inputs),
        imp::Binary::make(imp::BinaryOp::Sub, imp::Load::make(pos, rows), imp::Load::make(pos, imp::IntImm::make(0, int64)))));
  if (used.count(Statistic::Columns))
    statements.push_back(imp::Declare::make(
        statisticVar(Statistic::Columns, inputs),
        imp::Cast::make(int64, imp::TensorProperty::make(inputs.output, imp::TensorField::Dim, 1, imp::Type::int32()))));
  for (const Condition& clause : clauses_)
    statements.push_back(imp::Declare::make(imp::Var::make(nameOf(*clauseOf(clause), inputs), imp::Type::bool_()),
                                            exprOf(clauseOf(clause)->condition, inputs)));
  return statements;
}

imp::Expr Rule::conditionOf(size_t choice, const Inputs& inputs) const {
  return exprOf(choices_.at(choice).when, inputs);
}

std::string Rule::text(const Inputs& inputs) const {
  // The choices' clauses are written out where they are chosen.
  std::vector<Condition> named;
  for (const Choice& choice : choices_) named.push_back(choice.when);
  std::string text;
  for (const Choice& choice : choices_)
    text += choice.outcome + " where " + textOf(clauseOf(choice.when)->condition, inputs, named) + "; ";
  text += otherwise_ + " otherwise";
  std::set<Statistic> used;
  // Each clause a text names, then those its text names, and so on.
  for (size_t k = choices_.size(); k < named.size(); ++k) {
    const Clause& clause = *clauseOf(named[k]);
    text += (k == choices_.size() ? ". " : "; ") + nameOf(clause, inputs) + ": " +
            textOf(clause.condition, inputs, named);
  }
  for (const Condition& clause : clauses_) statisticsOf(clauseOf(clause)->condition, used);
  std::vector<std::string> ofMatrix;
  if (used.count(Statistic::Rows)) ofMatrix.push_back("rows");
  if (used.count(Statistic::Nonzeros)) ofMatrix.push_back("nonzeros");
  if (used.count(Statistic::LongestRow)) ofMatrix.push_back("the longest row");
  std::string legend;
  for (size_t k = 0; k < ofMatrix.size(); ++k)
    legend += (k == 0 ? "" : k + 1 == ofMatrix.size() ? " and " : ", ") + ofMatrix[k];
  if (!legend.empty()) legend += ": " + inputs.matrix + "'s";
  if (used.count(Statistic::Columns)) legend += (legend.empty() ? "" : "; ") + std::string("N: ") + inputs.output + "'s columns";
  if (used.count(Statistic::LongestRow)) legend += "; the longest row is counted once per device tensor";
  return text + " (" + legend + ")";
}

}  // namespace tcc::lowering::rules
