#include "minimizer.h"

#include <chrono>
#include <set>

#include "oracle.h"

namespace tcc::differential {
namespace {

using Clock = std::chrono::steady_clock;

struct Reducer {
  const std::function<bool(const Case&)>& stillFails;
  const MinimizeOptions& options;
  Clock::time_point start = Clock::now();
  int attempts = 0;
  int accepted = 0;

  bool outOfBudget() const {
    return attempts >= options.maxAttempts ||
           std::chrono::duration<double>(Clock::now() - start).count() > options.maxSeconds;
  }

  // Tries `candidate`; on success it replaces `current`.
  bool attempt(Case& current, Case candidate) {
    if (outOfBudget()) return false;
    dropUnusedInputs(candidate);
    bool anyNonzero = false;
    for (const auto& [name, coo] : candidate.data) anyNonzero = anyNonzero || coo.nnz() > 0;
    if (!anyNonzero || (candidate.programText() == current.programText() && sameData(candidate, current))) return false;
    ++attempts;
    if (!stillFails(candidate)) return false;
    ++accepted;
    current = std::move(candidate);
    return true;
  }

  static bool sameData(const Case& a, const Case& b) {
    if (a.data.size() != b.data.size()) return false;
    for (const auto& [name, coo] : a.data) {
      auto other = b.data.find(name);
      if (other == b.data.end() || other->second.values != coo.values || other->second.coords != coo.coords ||
          other->second.dims != coo.dims)
        return false;
    }
    return true;
  }
};

// The expression's nodes in preorder, as paths of operand indices.
void nodePaths(const Expr& e, std::vector<size_t>& path, std::vector<std::vector<size_t>>& out) {
  out.push_back(path);
  for (size_t o = 0; o < e.operands.size(); ++o) {
    path.push_back(o);
    nodePaths(e.operands[o], path, out);
    path.pop_back();
  }
}

Expr& nodeAt(Expr& root, const std::vector<size_t>& path) {
  Expr* node = &root;
  for (size_t o : path) node = &node->operands[o];
  return *node;
}

// The statements of a case: 0 .. earlier.size() - 1 the earlier ones, then the last.
size_t statementCount(const Case& c) { return c.earlier.size() + 1; }
Expr& rhsOf(Case& c, size_t s) { return s < c.earlier.size() ? c.earlier[s].rhs : c.rhs; }
std::vector<std::string>& scheduleOf(Case& c, size_t s) {
  return s < c.earlier.size() ? c.earlier[s].schedule : c.schedule;
}

bool reduceSchedule(Reducer& r, Case& c) {
  bool changed = false;
  for (size_t s = 0; s < statementCount(c); ++s) {
    for (size_t k = scheduleOf(c, s).size(); k-- > 0;) {
      if (s >= statementCount(c) || k >= scheduleOf(c, s).size()) continue;
      Case candidate = c;
      scheduleOf(candidate, s).erase(scheduleOf(candidate, s).begin() + static_cast<long>(k));
      changed |= r.attempt(c, std::move(candidate));
    }
  }
  if (c.fastFp) {  // a finding that stays in strict mode is not fast mode's
    Case candidate = c;
    candidate.fastFp = false;
    changed |= r.attempt(c, std::move(candidate));
  }
  return changed;
}

// Replaces a node by one of its operands (a term of a sum, a factor of a
// product, the numerator of a quotient, the body of a sum or negation).
bool reduceExpression(Reducer& r, Case& c) {
  bool changed = false;
  for (size_t s = 0; s < statementCount(c); ++s) {
    for (bool progress = true; progress && !r.outOfBudget() && s < statementCount(c);) {
      progress = false;
      std::vector<std::vector<size_t>> paths;
      std::vector<size_t> path;
      nodePaths(rhsOf(c, s), path, paths);
      for (const auto& node : paths) {
        const Expr& e = nodeAt(rhsOf(c, s), node);
        for (size_t o = 0; !progress && o < e.operands.size(); ++o) {
          Case candidate = c;
          Expr replacement = nodeAt(rhsOf(candidate, s), node).operands[o];
          if (e.kind == Expr::Kind::Sub && o == 1) replacement = Expr::unary(Expr::Kind::Neg, replacement);
          if (replacement.kind == Expr::Kind::Literal && node.empty()) continue;
          nodeAt(rhsOf(candidate, s), node) = replacement;
          progress = r.attempt(c, std::move(candidate));
        }
        if (progress) break;
      }
      changed |= progress;
    }
  }
  return changed;
}

bool readsTensor(const Case& c, const std::string& name) {
  std::vector<const Expr*> accesses;
  collectAccesses(c.rhs, accesses);
  for (const auto& stage : c.earlier) collectAccesses(stage.rhs, accesses);
  for (const Expr* access : accesses)
    if (access->tensor == name) return true;
  return false;
}

// A dense array's nonzero entries (row-major, as the reference lays it out).
rt::Coo entriesOf(const test::DenseArray& array) {
  std::vector<int32_t> dims(array.dims.begin(), array.dims.end());
  rt::Coo coo = rt::Coo::ofShape(dims);
  std::vector<int32_t> coordinate(dims.size());
  for (size_t k = 0; k < array.values.size(); ++k) {
    if (array.values[k] == 0) continue;
    size_t linear = k;
    for (size_t m = dims.size(); m-- > 0;) {
      coordinate[m] = static_cast<int32_t>(linear % static_cast<size_t>(dims[m]));
      linear /= static_cast<size_t>(dims[m]);
    }
    coo.push(coordinate.data(), array.values[k]);
  }
  return coo;
}

// Earlier statements of a chained case: one no statement reads is dropped;
// the last statement is dropped, the one before taking its place; an
// earlier statement becomes an input holding what it computes.
bool reduceStatements(Reducer& r, Case& c) {
  bool changed = false;
  for (size_t s = c.earlier.size(); s-- > 0;) {
    if (s >= c.earlier.size()) continue;
    Case candidate = c;
    candidate.earlier.erase(candidate.earlier.begin() + static_cast<long>(s));
    if (!readsTensor(candidate, c.earlier[s].output.name)) changed |= r.attempt(c, std::move(candidate));
  }
  if (!c.earlier.empty()) {
    Case candidate = c;
    Stage last = candidate.earlier.back();
    candidate.earlier.pop_back();
    candidate.output = last.output;
    candidate.rhs = last.rhs;
    candidate.schedule = last.schedule;
    changed |= r.attempt(c, std::move(candidate));
  }
  for (size_t s = c.earlier.size(); s-- > 0;) {
    if (s >= c.earlier.size() || r.outOfBudget()) continue;
    std::optional<Outputs> computed;
    try {
      computed = ReferenceOracle().evaluate(Program::fromText(c.programText(), "case.tc"), c.data);
    } catch (const std::exception&) {
      return changed;
    }
    const std::string name = c.earlier[s].output.name;
    if (!computed || !computed->count(name)) continue;
    Case candidate = c;
    candidate.inputs.push_back(candidate.earlier[s].output);
    candidate.data[name] = entriesOf(computed->at(name));
    candidate.earlier.erase(candidate.earlier.begin() + static_cast<long>(s));
    changed |= r.attempt(c, std::move(candidate));
  }
  return changed;
}

bool reduceFormats(Reducer& r, Case& c) {
  bool changed = false;
  if (c.type != ElementType::Float64) {
    Case candidate = c;
    candidate.type = ElementType::Float64;
    changed |= r.attempt(c, std::move(candidate));
  }
  auto simplify = [&](auto&& tensorOf) {
    {
      Case candidate = c;
      TensorDecl& tensor = tensorOf(candidate);
      if (tensor.namedFormat) {
        tensor.namedFormat.reset();
        changed |= r.attempt(c, std::move(candidate));
      }
    }
    if (!tensorOf(c).modeOrder.empty()) {
      Case candidate = c;
      tensorOf(candidate).modeOrder.clear();
      changed |= r.attempt(c, std::move(candidate));
    }
    for (size_t l = 0; l < tensorOf(c).levels.size(); ++l) {
      if (tensorOf(c).levels[l] == LevelKind::Dense) continue;
      Case candidate = c;
      TensorDecl& tensor = tensorOf(candidate);
      tensor.namedFormat.reset();
      bool run = tensor.levels[l] == LevelKind::CompressedNonunique;
      tensor.levels[l] = LevelKind::Dense;
      // A coordinate run becomes all compressed.
      for (size_t k = l + 1; run && k < tensor.levels.size(); ++k) tensor.levels[k] = LevelKind::Compressed;
      changed |= r.attempt(c, std::move(candidate));
    }
  };
  simplify([](Case& x) -> TensorDecl& { return x.output; });
  for (size_t s = 0; s < c.earlier.size(); ++s)
    simplify([s](Case& x) -> TensorDecl& { return s < x.earlier.size() ? x.earlier[s].output : x.output; });
  for (size_t t = 0; t < c.inputs.size(); ++t) {
    std::string name = c.inputs[t].name;
    simplify([name](Case& x) -> TensorDecl& {
      for (auto& tensor : x.inputs)
        if (tensor.name == name) return tensor;
      return x.inputs.front();
    });
  }
  return changed;
}

rt::Coo keepEntries(const rt::Coo& coo, const std::function<bool(size_t)>& keep) {
  rt::Coo kept = rt::Coo::ofShape(coo.dims);
  std::vector<int32_t> coordinate(static_cast<size_t>(coo.order()));
  for (size_t e = 0; e < coo.nnz(); ++e) {
    if (!keep(e)) continue;
    for (size_t m = 0; m < coordinate.size(); ++m) coordinate[m] = coo.coords[m][e];
    kept.push(coordinate.data(), coo.values[e]);
  }
  return kept;
}

// Removes the coordinates [from, from + count) of `var` from every input
// that uses it; later coordinates move down.
Case withoutCoordinatesOfOne(const Case& c, const std::string& var, int from, int count) {
  Case candidate = c;
  candidate.sizes[var] -= count;
  for (const auto& tensor : candidate.inputs) {
    rt::Coo& coo = candidate.data.at(tensor.name);
    std::vector<size_t> modes;
    for (size_t m = 0; m < tensor.vars.size(); ++m)
      if (tensor.vars[m] == var) modes.push_back(m);
    if (modes.empty()) continue;
    coo = keepEntries(coo, [&](size_t e) {
      for (size_t m : modes)
        if (coo.coords[m][e] >= from && coo.coords[m][e] < from + count) return false;
      return true;
    });
    for (size_t m : modes) {
      coo.dims[m] -= count;
      for (auto& coordinate : coo.coords[m])
        if (coordinate >= from + count) coordinate -= count;
    }
  }
  return candidate;
}

// The variables of one size as `var`: an earlier statement's output's
// variables and those later statements read it at, and the variables that
// take another's dimension (Case::sharedDimensions).
std::set<std::string> linkedVariables(const Case& c, const std::string& var) {
  std::set<std::string> linked = {var};
  std::vector<const Expr*> accesses;
  collectAccesses(c.rhs, accesses);
  for (const auto& stage : c.earlier) collectAccesses(stage.rhs, accesses);
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [from, to] : c.sharedDimensions) {
      bool either = linked.count(from) || linked.count(to);
      if (either && (linked.insert(from).second | linked.insert(to).second)) grew = true;
    }
    for (const Expr* access : accesses) {
      for (const auto& stage : c.earlier) {
        if (access->tensor != stage.output.name || access->vars.size() != stage.output.vars.size()) continue;
        for (size_t m = 0; m < access->vars.size(); ++m) {
          bool either = linked.count(access->vars[m]) || linked.count(stage.output.vars[m]);
          if (either && (linked.insert(access->vars[m]).second | linked.insert(stage.output.vars[m]).second))
            grew = true;
        }
      }
    }
  }
  return linked;
}

// Removes the coordinates [from, from + count) of one variable (and of the
// variables linked to it) from every input that uses it; later coordinates
// move down.
Case withoutCoordinates(const Case& c, const std::string& var, int from, int count) {
  Case candidate = c;
  for (const auto& linked : linkedVariables(c, var)) {
    if (!candidate.sizes.count(linked)) continue;
    candidate = withoutCoordinatesOfOne(candidate, linked, from, count);
  }
  return candidate;
}
// Halves, then quarters, ... each variable's range, keeping the parts
// whose removal loses the failure.
bool reduceShapes(Reducer& r, Case& c) {
  bool changed = false;
  std::vector<std::string> vars;
  for (const auto& [var, size] : c.sizes) vars.push_back(var);
  for (const auto& var : vars) {
    for (int chunk = std::max(1, c.sizes.at(var) / 2); chunk >= 1 && !r.outOfBudget(); chunk /= 2) {
      for (int from = 0; from < c.sizes.at(var) && c.sizes.at(var) > 1 && !r.outOfBudget();) {
        int count = std::min(chunk, c.sizes.at(var) - from);
        if (count >= c.sizes.at(var)) break;
        if (r.attempt(c, withoutCoordinates(c, var, from, count))) {
          changed = true;
        } else {
          from += chunk;
        }
      }
      if (chunk == 1) break;
    }
  }
  return changed;
}

// Tensors that divide: their data stays nonzero everywhere.
void collectDivisors(const Expr& e, std::set<std::string>& divisors) {
  if (e.kind == Expr::Kind::Div && e.operands[1].kind == Expr::Kind::Access) divisors.insert(e.operands[1].tensor);
  for (const auto& operand : e.operands) collectDivisors(operand, divisors);
}

bool reduceEntries(Reducer& r, Case& c) {
  bool changed = false;
  std::set<std::string> divisors;
  collectDivisors(c.rhs, divisors);
  for (const auto& stage : c.earlier) collectDivisors(stage.rhs, divisors);
  for (const auto& tensor : std::vector<TensorDecl>(c.inputs)) {
    if (!c.data.count(tensor.name) || divisors.count(tensor.name)) continue;
    for (size_t chunk = std::max<size_t>(1, c.data.at(tensor.name).nnz() / 2); chunk >= 1 && !r.outOfBudget();
         chunk /= 2) {
      for (size_t from = 0; from < c.data.at(tensor.name).nnz();) {
        Case candidate = c;
        const rt::Coo& coo = c.data.at(tensor.name);
        candidate.data[tensor.name] = keepEntries(coo, [&](size_t e) { return e < from || e >= from + chunk; });
        if (r.attempt(c, std::move(candidate))) {
          changed = true;
        } else {
          from += chunk;
        }
        if (r.outOfBudget()) break;
      }
      if (chunk == 1) break;
    }
    // Values 1 read more easily than random ones.
    Case candidate = c;
    for (double& value : candidate.data[tensor.name].values) value = 1;
    changed |= r.attempt(c, std::move(candidate));
  }
  return changed;
}

}  // namespace

MinimizeResult minimize(const Case& failing, const std::function<bool(const Case&)>& stillFails,
                        const MinimizeOptions& options) {
  Reducer reducer{stillFails, options};
  Case current = failing;
  for (bool progress = true; progress && !reducer.outOfBudget();) {
    progress = false;
    progress |= reduceStatements(reducer, current);
    progress |= reduceSchedule(reducer, current);
    progress |= reduceExpression(reducer, current);
    progress |= reduceFormats(reducer, current);
    progress |= reduceShapes(reducer, current);
    progress |= reduceEntries(reducer, current);
  }
  return {current, reducer.attempts, reducer.accepted};
}

}  // namespace tcc::differential
