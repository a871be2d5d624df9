// The rules by which a host part picks, per input, one of the kernels
// lowered side by side from one statement (the default SpMM's five, a CSR
// output's thread or warp a row; gpu_spmm_mappings.h and
// gpu_default_mapping.h). Each rule is written once, as a small tree over
// named statistics of the input (A's rows, nonzeros and longest row, C's
// columns N), and everything else is derived from that one description:
//  - its evaluation in C++ (Rule::choose: the tests, and what a reader of
//    the rule can run by hand),
//  - the host part's statements (Rule::hostStatements: the statistics
//    read from the tensors, then one bool a clause, then the caller's ifs
//    over the choices' bools), and
//  - its explain text (Rule::text), which is also the host part's comment.
//
// A rule is a list of clauses (named conditions, each a bool of the host
// part, `A_<name>`) and of choices in order: the first choice whose
// condition holds is taken, and `otherwise` where none does. Conditions
// compare terms (statistics, constants, products) and combine with && and
// ||, written with C++ operators:
//
//   Rule rule("a thread or a warp a row of the output", "a thread a row");
//   Condition skewed = rule.clause("split_nonzeros",
//       longestRow >= kBalancedLongestRow && longestRow * rows >= kBalancedSkew * nonzeros);
//   rule.choose(rule.clause("rows_on_warps", nonzeros >= kLaneSlicedMeanRow * rows || skewed),
//               "a warp a row");
//
// Products saturate at the int64 limits, the same in C++ and in the host
// part (tcc_saturating_mul, gpu_kernels.h), so no input can make the two
// disagree or overflow; a product of factors too small to overflow (rows
// and N are int32 dimensions) is printed as a plain `*`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"

namespace tcc::lowering::rules {

// What a rule reads of its inputs: a CSR matrix A and, for N, the output C.
enum class Statistic { Rows, Nonzeros, LongestRow, Columns };

struct Statistics {
  int64_t rows = 0, nonzeros = 0, longestRow = 0, columns = 0;
};

// A whole number: a statistic, a constant, or a product of two terms.
class Term {
 public:
  struct Node;
  Term(Statistic statistic);  // NOLINT: rules read as arithmetic
  Term(int64_t constant);     // NOLINT
  Term(int constant) : Term(static_cast<int64_t>(constant)) {}  // NOLINT
  explicit Term(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  const Node& node() const { return *node_; }

 private:
  std::shared_ptr<const Node> node_;
};
Term operator*(const Term& a, const Term& b);

inline const Term rows{Statistic::Rows}, nonzeros{Statistic::Nonzeros}, longestRow{Statistic::LongestRow},
    columns{Statistic::Columns};

// A comparison of two terms, both or either of two conditions, or a clause
// (a named condition).
class Condition {
 public:
  struct Node;
  explicit Condition(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  const Node& node() const { return *node_; }

 private:
  std::shared_ptr<const Node> node_;
};
Condition operator<(const Term& a, const Term& b);
Condition operator<=(const Term& a, const Term& b);
Condition operator>(const Term& a, const Term& b);
Condition operator>=(const Term& a, const Term& b);
Condition operator&&(const Condition& a, const Condition& b);
Condition operator||(const Condition& a, const Condition& b);

// The names a rule's host statements and text use: the CSR matrix A whose
// rows it reads and the output whose columns are N.
struct Inputs {
  std::string matrix, output;
};

// A named condition (the host part's bool `A_<name>`) that no rule has
// declared yet: for a clause several rules share, each declaring it with
// Rule::clause(condition).
Condition clause(const std::string& name, const Condition& condition);

class Rule {
 public:
  // `purpose` leads the host part's comment ("the SpMM kernel by A's rows
  // and C's columns", with {A} and {C} standing for the inputs' names);
  // `otherwise` says what runs where no choice's condition holds.
  Rule(std::string purpose, std::string otherwise);

  // A named condition (the host part's bool `A_<name>`); the condition
  // returned stands for it in later clauses and choices. A clause of
  // another rule is declared again here with clause(condition) below.
  Condition clause(const std::string& name, const Condition& condition);
  // A clause another rule declared (shared between rules), declared in
  // this one too.
  Condition clause(const Condition& clauseOfAnotherRule);
  // The next choice: `outcome` runs where `when` (a clause) holds and no
  // earlier choice's does.
  void choose(const Condition& when, std::string outcome);

  size_t choiceCount() const { return choices_.size(); }
  const std::string& outcomeOf(size_t choice) const;
  // The first choice whose condition holds for `statistics`, or
  // choiceCount() where none does (`otherwise`).
  size_t choose(const Statistics& statistics) const;
  // Whether a clause holds for `statistics`.
  static bool holds(const Condition& condition, const Statistics& statistics);

  // The host statements that compute the rule for `inputs`: a comment (the
  // purpose and the text), the statistics it reads, one bool a clause.
  // The caller branches on conditionOf(choice).
  std::vector<ir::imp::Stmt> hostStatements(const Inputs& inputs) const;
  // The host part's bool of a choice's clause (declared by hostStatements).
  ir::imp::Expr conditionOf(size_t choice, const Inputs& inputs) const;
  // The rule in words, derived from the clauses: each choice with its
  // condition, in order, then the clauses they name.
  std::string text(const Inputs& inputs) const;

 private:
  struct Choice {
    Condition when;
    std::string outcome;
  };
  std::string purpose_, otherwise_;
  std::vector<Condition> clauses_;  // each a clause node, in declaration order
  std::vector<Choice> choices_;
};

}  // namespace tcc::lowering::rules

namespace tcc::lowering {

// A long row far above the mean (gpu_default_mapping.h): the clause the
// lane-sliced rows' rule and the SpMM's share (default_mapping.cpp).
rules::Condition balancedRowClause();

}  // namespace tcc::lowering
