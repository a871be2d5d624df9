#include "known_bugs.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace tcc::differential {
namespace {

void splitTerms(const Expr& e, std::vector<const Expr*>& terms) {
  if (e.kind == Expr::Kind::Add || e.kind == Expr::Kind::Sub) {
    splitTerms(e.operands[0], terms);
    splitTerms(e.operands[1], terms);
    return;
  }
  terms.push_back(&e);
}

std::set<std::string> variablesOf(const Expr& e) {
  std::vector<const Expr*> accesses;
  collectAccesses(e, accesses);
  std::set<std::string> vars;
  for (const Expr* access : accesses) vars.insert(access->vars.begin(), access->vars.end());
  return vars;
}

std::set<std::set<std::string>> summedSetsOfTerms(const Case& c) {
  std::vector<const Expr*> terms;
  splitTerms(c.rhs, terms);
  std::set<std::string> outputVars(c.output.vars.begin(), c.output.vars.end());
  std::set<std::set<std::string>> summedSets;
  for (const Expr* term : terms) {
    std::set<std::string> summed;
    for (const auto& var : variablesOf(*term))
      if (!outputVars.count(var)) summed.insert(var);
    summedSets.insert(summed);
  }
  return summedSets;
}

bool isWorkspaceCommand(const std::string& command) {
  return command.rfind("precompute(", 0) == 0 || command.rfind("dense_workspace(", 0) == 0;
}

// A product one of whose factors is a sum or difference and another an
// explicit sum(...), which tcc computes into a temporary.
bool multipliesAUnionByAnInnerSum(const Expr& e) {
  if (e.kind == Expr::Kind::Mul) {
    auto kindOf = [](const Expr& x) { return x.kind == Expr::Kind::Neg ? x.operands[0].kind : x.kind; };
    bool sum = false, unionFactor = false;
    std::vector<const Expr*> factors = {&e.operands[0], &e.operands[1]};
    for (size_t f = 0; f < factors.size(); ++f) {
      if (factors[f]->kind == Expr::Kind::Mul) {
        factors.push_back(&factors[f]->operands[0]);
        factors.push_back(&factors[f]->operands[1]);
      }
      sum = sum || kindOf(*factors[f]) == Expr::Kind::Sum;
      unionFactor = unionFactor || kindOf(*factors[f]) == Expr::Kind::Add || kindOf(*factors[f]) == Expr::Kind::Sub;
    }
    if (sum && unionFactor) return true;
  }
  for (const auto& operand : e.operands)
    if (multipliesAUnionByAnInnerSum(operand)) return true;
  return false;
}

bool isVectorLoop(const std::string& command) {
  return command.rfind("parallelize(", 0) == 0 && command.find("CPUVector") != std::string::npos;
}

bool containsSumOrDifference(const Expr& e) {
  if (e.kind == Expr::Kind::Add || e.kind == Expr::Kind::Sub) return true;
  for (const auto& operand : e.operands)
    if (containsSumOrDifference(operand)) return true;
  return false;
}

bool reduces(const Case& c) {
  std::set<std::string> outputVars(c.output.vars.begin(), c.output.vars.end());
  for (const auto& var : variablesOf(c.rhs))
    if (!outputVars.count(var)) return true;
  return false;
}

bool hasTopLevelSum(const Case& c) { return c.rhs.kind == Expr::Kind::Add || c.rhs.kind == Expr::Kind::Sub; }

}  // namespace

std::optional<std::string> knownOpenBug(const Case& failing, const Verdict& verdict,
                                        const std::function<Verdict(const Case&)>& check) {
  if (verdict.outcome == Outcome::Internal && verdict.detail.find("a sum reached the lowerer") != std::string::npos)
    return "(e) an explicit sum(...) that is not the whole right-hand side of a scalar result reaches the lowerer "
           "(internal error)";
  if (verdict.outcome == Outcome::Internal && verdict.detail.find("is not located by the loops around it") != std::string::npos)
    return "(h) precompute over a variable that a later split, divide or bound transforms: internal error, an access "
           "not located";
  auto hasCommand = [&](const char* name) {
    return std::any_of(failing.schedule.begin(), failing.schedule.end(),
                       [&](const std::string& command) { return command.rfind(name, 0) == 0; });
  };
  if (verdict.outcome == Outcome::Internal && verdict.detail.find("adopt: vals_size") != std::string::npos &&
      hasCommand("bound(") && hasCommand("fuse("))
    return "(j) bound(i, ib, N, MaxConstraint) with N above the dimension, then fuse(ib, j, f), into a compressed output "
           "level: the kernel assembles one value more than positions";
  if (verdict.outcome == Outcome::Crash && std::any_of(failing.schedule.begin(), failing.schedule.end(), isVectorLoop)) {
    Case without = failing;
    std::erase_if(without.schedule, isVectorLoop);
    if (check(without).outcome != Outcome::Crash)
      return "(g) a CPUThread loop nested with a CPUVector loop: the emitted OpenMP is invalid and the JIT crashes on it";
  }
  if (verdict.outcome != Outcome::Mismatch) return std::nullopt;
  if (std::any_of(failing.schedule.begin(), failing.schedule.end(), isWorkspaceCommand)) {
    Case without = failing;
    std::erase_if(without.schedule, isWorkspaceCommand);
    if (check(without).outcome != Outcome::Mismatch)
      return "(b) precompute or dense_workspace placed outside a variable the expression depends on (or, (f), not "
             "cleared between iterations)";
  }
  if (multipliesAUnionByAnInnerSum(failing.rhs))
    return "(i) a sum or difference multiplied by an explicit inner sum(...): rows only the dense operand has are lost";
  if (hasTopLevelSum(failing) && summedSetsOfTerms(failing).size() > 1)
    return "(a) a sum mixing a term that reduces over an inner variable with one indexed only by outer variables";
  if (containsSumOrDifference(failing.rhs) && reduces(failing))
    return "(d) a sum or difference inside or beside a reduction (all terms reducing alike), with a compressed level "
           "at an outer variable in one operand only";
  return std::nullopt;
}

bool strictMode() {
  const char* value = std::getenv("TCC_DIFFERENTIAL_STRICT");
  return value && std::string(value) == "1";
}

}  // namespace tcc::differential
