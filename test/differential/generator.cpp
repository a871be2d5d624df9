#include "generator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>

#include "tcc/ir/index_stmt.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/random.h"
#include "tcc/runtime/value_type.h"
#include "tcc/tcc.h"
#include "tcc/test/random_schedule.h"

namespace tcc::differential {
namespace {

const std::vector<std::string> kVariables = {"i", "j", "k", "l", "m", "n", "p"};
const std::vector<std::string> kTensorNames = {"A", "B", "C", "D", "E", "F", "G", "H", "Q", "R", "S", "T", "U", "V", "W", "X"};
const std::vector<std::string> kRealMatrices = {"LF10.mtx", "cage5.mtx", "bcspwr01.mtx", "bcsstk01.mtx", "ash219.mtx"};

// A variable's letter's place in kVariables (an earlier statement of a
// chained case writes its variables as the letter and a number: `i1`).
size_t introductionRank(const std::string& var) {
  return static_cast<size_t>(std::find(kVariables.begin(), kVariables.end(), var.substr(0, 1)) - kVariables.begin());
}

bool byIntroduction(const std::string& a, const std::string& b) { return introductionRank(a) < introductionRank(b); }

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(engine_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(engine_) < p; }
  // An index drawn with the given weights.
  size_t weighted(std::initializer_list<double> weights) {
    return std::discrete_distribution<size_t>(weights)(engine_);
  }
  template <typename T>
  const T& from(const std::vector<T>& values) { return values[pick(values.size())]; }
  uint64_t next() { return engine_(); }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

struct Builder {
  Random& random;
  Case& c;
  std::set<std::string> divisors;  // tensors whose data must be nonzero everywhere
  bool productsOnly = false;
  bool cuda = false;
  bool repeatedOperands = false;
  std::set<std::string> tied;  // variables of one size: a tensor is read at several of them
  bool builtins = false;
  // An earlier statement of a chained case: its tensors' names end with
  // this, and its output's sizes are fixed by the statement reading it.
  std::string nameSuffix;
  bool sizesFixed = false;

  std::string newTensor(std::vector<std::string> vars) {
    size_t n = c.inputs.size();
    std::string name = (n < kTensorNames.size() ? kTensorNames[n] : "Z" + std::to_string(n)) + nameSuffix;
    TensorDecl tensor;
    tensor.name = name;
    tensor.vars = std::move(vars);
    c.inputs.push_back(std::move(tensor));
    return name;
  }

  // `order` of the term's variables, mostly in the order they were introduced.
  std::vector<std::string> accessVars(const std::vector<std::string>& termVars, int order) {
    std::vector<std::string> vars = termVars;
    std::shuffle(vars.begin(), vars.end(), random.engine());
    vars.resize(static_cast<size_t>(order));
    if (!random.chance(0.1)) std::sort(vars.begin(), vars.end(), byIntroduction);
    return vars;
  }

  double literal() {
    if (isFloat(c.type)) return random.from(std::vector<double>{0.5, 2, 1.5, -3, 0.25, 3});
    return random.from(std::vector<double>{2, 3, -1});
  }

  // One top-level term: a product of accesses over `termVars` (each variable
  // read by at least one access), sometimes with a literal, a parenthesized
  // sum, an explicit inner sum, a negation or a division.
  Expr term(const std::vector<std::string>& termVars, const std::vector<std::string>& summed) {
    int count = 1 + static_cast<int>(random.weighted({40, 45, 15}));
    std::vector<std::vector<std::string>> factorVars;
    for (int a = 0; a < count; ++a) {
      int most = std::min<int>(4, static_cast<int>(termVars.size()));
      int order = most == 0 ? 0 : (random.chance(0.05) ? 0 : 1 + static_cast<int>(random.pick(static_cast<size_t>(most))));
      factorVars.push_back(accessVars(termVars, order));
    }
    for (const auto& var : termVars) {
      bool covered = false;
      for (const auto& vars : factorVars) covered = covered || std::find(vars.begin(), vars.end(), var) != vars.end();
      if (covered) continue;
      std::vector<size_t> open;
      for (size_t a = 0; a < factorVars.size(); ++a)
        if (factorVars[a].size() < 4) open.push_back(a);
      if (open.empty()) {
        factorVars.push_back({var});
      } else {
        auto& vars = factorVars[random.from(open)];
        bool canonical = std::is_sorted(vars.begin(), vars.end(), byIntroduction);
        vars.insert(vars.begin() + static_cast<long>(random.pick(vars.size() + 1)), var);
        if (canonical) std::sort(vars.begin(), vars.end(), byIntroduction);
      }
    }
    std::vector<Expr> factors;
    for (auto& vars : factorVars) factors.push_back(Expr::access(newTensor(vars), vars));
    if (repeatedOperands && random.chance(0.35)) {  // a tensor read again, at the same indices
      std::vector<size_t> again;
      for (size_t t = 0; t < c.inputs.size(); ++t) {
        const TensorDecl& tensor = c.inputs[t];
        bool inTerm = !divisors.count(tensor.name);
        for (const auto& var : tensor.vars)
          inTerm = inTerm && std::find(termVars.begin(), termVars.end(), var) != termVars.end();
        if (inTerm) again.push_back(t);
      }
      if (!again.empty()) {
        const TensorDecl& tensor = c.inputs[random.from(again)];
        factors.push_back(Expr::access(tensor.name, tensor.vars));
        // With integer sizes, sometimes at other indices of the term (A(i,j)
        // * A(j,i), A(i,k) * A(k,j)): one tensor read in two orders. Every
        // variable such an access ties gets one size (the data is drawn
        // later, from the final sizes).
        if (!c.symbolicSizes && !sizesFixed && tensor.vars.size() >= 2 && tensor.vars.size() <= termVars.size() &&
            random.chance(0.5)) {
          std::vector<std::string> vars = termVars;
          std::shuffle(vars.begin(), vars.end(), random.engine());
          vars.resize(tensor.vars.size());
          if (vars != tensor.vars) {
            factors.back().vars = vars;
            int size = c.sizes.at(tied.empty() ? tensor.vars[0] : *tied.begin());
            tied.insert(tensor.vars.begin(), tensor.vars.end());
            tied.insert(vars.begin(), vars.end());
            for (const auto& var : tied) c.sizes[var] = size;
          }
        }
      }
    }

    if (!productsOnly && random.chance(cuda ? 0.06 : 0.12)) {  // (X + Y) in place of X
      size_t f = random.pick(factors.size());
      Expr other = Expr::access(newTensor(factors[f].vars), factors[f].vars);
      factors[f] = Expr::binary(random.chance(0.5) ? Expr::Kind::Add : Expr::Kind::Sub, factors[f], other);
    }
    if (builtins && random.chance(0.35)) {  // a builtin around one factor
      size_t f = random.pick(factors.size());
      factors[f] = builtinOf(factors[f]);
    }
    // An explicit sum over one summed variable around the factors that use it.
    std::optional<std::string> inner;
    if (!summed.empty() && factors.size() > 1 && random.chance(cuda ? 0.05 : 0.15)) inner = random.from(summed);
    Expr product;
    if (inner) {
      auto uses = [&](const Expr& e) {
        std::vector<const Expr*> accesses;
        collectAccesses(e, accesses);
        for (const Expr* a : accesses)
          if (std::find(a->vars.begin(), a->vars.end(), *inner) != a->vars.end()) return true;
        return false;
      };
      std::vector<Expr> with, without;
      for (auto& f : factors) (uses(f) ? with : without).push_back(f);
      Expr summedPart = with[0];
      for (size_t f = 1; f < with.size(); ++f) summedPart = Expr::binary(Expr::Kind::Mul, summedPart, with[f]);
      factors = without;
      factors.push_back(Expr::unary(Expr::Kind::Sum, summedPart, {*inner}));
    }
    std::shuffle(factors.begin(), factors.end(), random.engine());
    product = factors[0];
    for (size_t f = 1; f < factors.size(); ++f) product = Expr::binary(Expr::Kind::Mul, product, factors[f]);
    if (random.chance(0.15)) {
      Expr number = Expr::number(literal());
      product = random.chance(0.5) ? Expr::binary(Expr::Kind::Mul, number, product)
                                   : Expr::binary(Expr::Kind::Mul, product, number);
    }
    if (isFloat(c.type) && random.chance(0.15)) {
      if (random.chance(0.4) || termVars.empty()) {
        product = Expr::binary(Expr::Kind::Div, product, Expr::number(random.from(std::vector<double>{2, 0.5, -4})));
      } else {
        std::vector<std::string> vars = termVars;
        std::shuffle(vars.begin(), vars.end(), random.engine());
        vars.resize(1 + random.pick(std::min<size_t>(2, vars.size())));
        std::string name = newTensor(vars);
        divisors.insert(name);
        product = Expr::binary(Expr::Kind::Div, product, Expr::access(name, vars));
      }
    }
    if (random.chance(0.08)) product = Expr::unary(Expr::Kind::Neg, product);
    return product;
  }

  // abs, sqrt(abs(.)), exp (floats), max or min with a literal or with a
  // new tensor at the factor's first access's indices.
  Expr builtinOf(const Expr& factor) {
    std::vector<const Expr*> accesses;
    collectAccesses(factor, accesses);
    auto other = [&]() {
      if (accesses.empty() || random.chance(0.4)) return Expr::number(literal());
      return Expr::access(newTensor(accesses.front()->vars), accesses.front()->vars);
    };
    const bool floating = isFloat(c.type);
    switch (random.weighted({25, floating ? 15.0 : 0.0, floating ? 20.0 : 0.0, 20, 20})) {
      case 0: return Expr::call("abs", {factor});
      case 1: return Expr::call("sqrt", {Expr::call("abs", {factor})});
      case 2: return Expr::call("exp", {factor});
      case 3: return Expr::call("max", {factor, other()});
      default: return Expr::call("min", {other(), factor});
    }
  }

  void formatOf(TensorDecl& tensor, bool isOutput) {
    size_t order = tensor.vars.size();
    tensor.levels.clear();
    tensor.modeOrder.clear();
    if (order == 0) return;
    if (divisors.count(tensor.name)) {
      tensor.levels.assign(order, LevelKind::Dense);
      return;
    }
    if (isOutput) {
      if (random.chance(cuda ? 0.9 : 0.5)) {
        tensor.levels.assign(order, LevelKind::Dense);
      } else if (random.chance(0.1)) {
        tensor.namedFormat = "coo";
        tensor.levels.assign(order, LevelKind::SingletonNonunique);
        tensor.levels[0] = LevelKind::CompressedNonunique;
        tensor.levels.back() = LevelKind::Singleton;
        if (order == 1) tensor.levels = {LevelKind::Compressed};
      } else {
        for (size_t l = 0; l < order; ++l)
          tensor.levels.push_back(random.chance(0.5) ? LevelKind::Dense : LevelKind::Compressed);
      }
    } else if (cuda && random.chance(0.35)) {
      // Fewer sparse operands to co-iterate (the cuda target's while loops).
      tensor.levels.assign(order, LevelKind::Dense);
    } else if (random.chance(0.15)) {
      namedFormatOf(tensor);
    } else {
      for (size_t l = 0; l < order; ++l) {
        if (l > 0 && (tensor.levels[l - 1] == LevelKind::CompressedNonunique ||
                      tensor.levels[l - 1] == LevelKind::SingletonNonunique)) {
          tensor.levels.push_back(l + 1 == order ? LevelKind::Singleton : LevelKind::SingletonNonunique);
          continue;
        }
        // The cuda target co-iterates sparse operands in while loops, which
        // no GPU unit takes: its cases store more levels dense.
        size_t kind = cuda ? random.weighted({65, 25, l + 1 < order ? 5.0 : 0.0, l > 0 ? 5.0 : 0.0})
                           : random.weighted({35, 45, l + 1 < order ? 10.0 : 0.0, l > 0 ? 10.0 : 0.0});
        tensor.levels.push_back(std::vector<LevelKind>{LevelKind::Dense, LevelKind::Compressed,
                                                       LevelKind::CompressedNonunique, LevelKind::Singleton}[kind]);
      }
    }
    if (!tensor.namedFormat && order > 1 && random.chance(0.1)) {
      tensor.modeOrder.resize(order);
      for (size_t m = 0; m < order; ++m) tensor.modeOrder[m] = static_cast<int>(m);
      std::shuffle(tensor.modeOrder.begin(), tensor.modeOrder.end(), random.engine());
    }
  }

  void namedFormatOf(TensorDecl& tensor) {
    size_t order = tensor.vars.size();
    std::vector<std::string> names = {"csf", "coo"};
    if (order == 1) names = {"sparse", "dense", "coo"};
    if (order == 2) names = {"csr", "csc", "dcsr", "dcsc", "coo"};
    std::string name = random.from(names);
    tensor.namedFormat = name;
    tensor.levels.assign(order, LevelKind::Compressed);
    if (name == "dense") tensor.levels.assign(order, LevelKind::Dense);
    if (name == "csr" || name == "csc") tensor.levels[0] = LevelKind::Dense;
    if (name == "csc" || name == "dcsc") tensor.modeOrder = {1, 0};
    if (name == "coo" && order > 1) {
      tensor.levels.assign(order, LevelKind::SingletonNonunique);
      tensor.levels[0] = LevelKind::CompressedNonunique;
      tensor.levels.back() = LevelKind::Singleton;
    }
  }
};

std::vector<int32_t> dimsOf(const Case& c, const TensorDecl& tensor) {
  std::vector<int32_t> dims;
  for (const auto& var : tensor.vars) dims.push_back(c.sizes.at(var));
  return dims;
}

// Keeps the first entry under each parent of a unique singleton level
// (one that does not end a coordinate run), so the format can hold the data.
rt::Coo fitSingletons(const rt::Coo& coo, const TensorDecl& tensor) {
  size_t order = tensor.levels.size();
  size_t first = order;
  for (size_t l = 1; l < order && first == order; ++l) {
    bool inRun = tensor.levels[l - 1] == LevelKind::CompressedNonunique || tensor.levels[l - 1] == LevelKind::SingletonNonunique;
    if (tensor.levels[l] == LevelKind::Singleton && !inRun) first = l;
  }
  if (first == order) return coo;
  auto mode = [&](size_t level) { return tensor.modeOrder.empty() ? level : static_cast<size_t>(tensor.modeOrder[level]); };
  rt::Coo fitted = rt::Coo::ofShape(coo.dims);
  std::set<std::vector<int32_t>> parents;
  std::vector<int32_t> coordinate(order);
  for (size_t e = 0; e < coo.nnz(); ++e) {
    std::vector<int32_t> parent;
    for (size_t l = 0; l < first; ++l) parent.push_back(coo.coords[mode(l)][e]);
    if (!parents.insert(parent).second) continue;
    for (size_t m = 0; m < order; ++m) coordinate[m] = coo.coords[m][e];
    fitted.push(coordinate.data(), coo.values[e]);
  }
  return fitted;
}

rt::Coo randomData(Random& random, const Case& c, const TensorDecl& tensor, bool divisor) {
  std::vector<int32_t> dims = dimsOf(c, tensor);
  rt::Coo coo;
  if (divisor) {
    coo = rt::randomUniform(dims, 1.0, random.next());
  } else if (random.chance(0.04)) {
    coo = rt::Coo::ofShape(dims);
  } else {
    coo = rt::randomUniform(dims, random.from(std::vector<double>{0.15, 0.4, 0.7, 1.0}), random.next());
    if (!dims.empty() && dims[0] > 1 && random.chance(0.2)) {  // empty rows (slices of mode 0)
      rt::Coo sparser = rt::Coo::ofShape(dims);
      int32_t keep = 1 + static_cast<int32_t>(random.pick(2));
      std::vector<int32_t> coordinate(dims.size());
      for (size_t e = 0; e < coo.nnz(); ++e) {
        if (coo.coords[0][e] % (keep + 1) != 0) continue;
        for (size_t m = 0; m < dims.size(); ++m) coordinate[m] = coo.coords[m][e];
        sparser.push(coordinate.data(), coo.values[e]);
      }
      coo = std::move(sparser);
    }
  }
  for (double& value : coo.values) {
    if (!isFloat(c.type)) value = static_cast<double>(random.from(std::vector<int>{-3, -2, -1, 1, 2, 3}));
    value = representable(value, c.type);
  }
  return fitSingletons(coo, tensor);
}

const rt::Coo& realMatrix(const std::string& folder, const std::string& name) {
  static std::map<std::string, rt::Coo> loaded;
  auto found = loaded.find(name);
  if (found == loaded.end()) found = loaded.emplace(name, rt::readMatrixMarket(folder + "/matrices/" + name)).first;
  return found->second;
}

// Default loops, sparse-level variables and sub-expressions of the
// unscheduled statement, for the schedule generator.
void collectLoops(const ir::IndexStmt& stmt, std::vector<std::string>& loops) {
  if (!stmt.defined()) return;
  if (const auto* forall = stmt.as<ir::ForallNode>()) {
    if (std::find(loops.begin(), loops.end(), forall->indexVar.name()) == loops.end())
      loops.push_back(forall->indexVar.name());
    collectLoops(forall->body, loops);
  } else if (const auto* where = stmt.as<ir::WhereNode>()) {
    collectLoops(where->consumer, loops);
    collectLoops(where->producer, loops);
  } else if (const auto* sequence = stmt.as<ir::SequenceNode>()) {
    collectLoops(sequence->definition, loops);
    collectLoops(sequence->mutation, loops);
  } else if (const auto* multi = stmt.as<ir::MultiNode>()) {
    collectLoops(multi->first, loops);
    collectLoops(multi->second, loops);
  } else if (const auto* suchThat = stmt.as<ir::SuchThatNode>()) {
    collectLoops(suchThat->stmt, loops);
  }
}

void collectSubexpressions(const Expr& e, bool top, std::vector<std::string>& out) {
  if (!top && e.kind != Expr::Kind::Literal) out.push_back(toString(e));
  for (const auto& operand : e.operands) collectSubexpressions(operand, false, out);
}

// The loops of the unscheduled statement as the CPU target orders them (a
// cuda case's unscheduled lowering would hold its default GPU mapping's
// loops); nothing where it is refused (the checker reports the reason).
std::optional<std::vector<std::string>> defaultLoops(const Case& c) {
  std::vector<std::string> loops;
  try {
    CompileOptions cpu;
    cpu.target = frontend::Target::Cpu;
    Lowered lowered = lowerProgram(Program::fromText(c.programText(), "case.tc"), cpu);
    for (const auto& statement : lowered.statements) collectLoops(statement.concrete, loops);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return loops;
}

// Whether the case lowers for its target (a refusal of its schedule is not).
bool lowers(const Case& c) {
  try {
    lowerProgram(Program::fromText(c.programText(), "case.tc"), CompileOptions{});
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Random commands over `loops` (the default loops, or those a head of
// commands left).
std::vector<std::string> randomSchedule(Random& random, const Case& c, const std::vector<std::string>& loops,
                                        bool severalPrecomputes, const std::string& fusedBase = "f") {
  test::ScheduleSpace space;
  space.loops = loops;
  std::vector<const Expr*> accesses;
  collectAccesses(c.rhs, accesses);
  for (const Expr* access : accesses) {
    const TensorDecl* tensor = c.findInput(access->tensor);
    for (size_t level = 0; level < tensor->levels.size(); ++level) {
      if (tensor->levels[level] == LevelKind::Dense) continue;
      size_t mode = tensor->modeOrder.empty() ? level : static_cast<size_t>(tensor->modeOrder[level]);
      space.positionAccesses.emplace(access->vars[mode], toString(*access));
    }
  }
  space.wideMix = true;
  space.gpuUnits = c.cudaTarget;
  space.severalPrecomputes = severalPrecomputes;
  space.fusedBase = fusedBase;
  space.sizes = c.sizes;
  collectSubexpressions(c.rhs, true, space.precomputable);
  std::mt19937 engine(static_cast<uint32_t>(random.next()));
  return test::randomScheduleCommands(space, engine);
}

// A position-space head (GeneratorOptions::posSchedules): its commands and
// the loops they leave, outermost first.
struct PositionHead {
  std::vector<std::string> commands;
  std::vector<std::string> loops;
};

std::optional<PositionHead> positionHead(Random& random, const Case& c, const std::vector<std::string>& defaultLoops) {
  std::vector<const Expr*> accesses;
  collectAccesses(c.rhs, accesses);
  std::map<std::string, int> reads;
  for (const Expr* access : accesses) ++reads[toString(*access)];
  struct Candidate {
    std::string access, var, outer;  // outer: the loop around var, where the two can be fused
  };
  std::vector<Candidate> candidates;
  std::vector<double> weights;
  auto loopAt = [&](const std::string& var) {
    return static_cast<size_t>(std::find(defaultLoops.begin(), defaultLoops.end(), var) - defaultLoops.begin());
  };
  for (const Expr* access : accesses) {
    const TensorDecl* tensor = c.findInput(access->tensor);
    auto modeOf = [&](size_t level) {
      return tensor->modeOrder.empty() ? level : static_cast<size_t>(tensor->modeOrder[level]);
    };
    for (size_t level = 0; level < tensor->levels.size(); ++level) {
      if (tensor->levels[level] != LevelKind::Compressed) continue;  // pos takes unique compressed levels
      Candidate candidate{toString(*access), access->vars[modeOf(level)], ""};
      size_t at = loopAt(candidate.var);
      if (at == defaultLoops.size()) continue;
      bool known = std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& other) {
        return other.access == candidate.access && other.var == candidate.var;
      });
      if (known) continue;
      if (level == 1 && (tensor->levels[0] == LevelKind::Dense || tensor->levels[0] == LevelKind::Compressed) && at > 0 &&
          defaultLoops[at - 1] == access->vars[modeOf(0)])
        candidate.outer = defaultLoops[at - 1];
      candidates.push_back(candidate);
      weights.push_back(reads.at(candidate.access) > 1 ? 3.0 : 1.0);  // a tensor read twice alike first
    }
  }
  if (candidates.empty()) return std::nullopt;
  const Candidate& chosen = candidates[std::discrete_distribution<size_t>(weights.begin(), weights.end())(random.engine())];
  PositionHead head;
  head.loops = defaultLoops;
  auto replace = [&](const std::string& var, std::vector<std::string> by) {
    auto at = std::find(head.loops.begin(), head.loops.end(), var);
    at = head.loops.erase(at);
    head.loops.insert(at, by.begin(), by.end());
  };
  std::string position;
  if (!chosen.outer.empty() && random.chance(0.4)) {
    std::string fused = chosen.outer + chosen.var;
    position = fused + "p";
    head.commands.push_back("fuse(" + chosen.outer + ", " + chosen.var + ", " + fused + ")");
    head.commands.push_back("pos(" + fused + ", " + position + ", " + chosen.access + ")");
    replace(chosen.var, {});
    replace(chosen.outer, {position});
  } else {
    position = chosen.var + "p";
    head.commands.push_back("pos(" + chosen.var + ", " + position + ", " + chosen.access + ")");
    replace(chosen.var, {position});
  }
  auto strategy = [&] {
    return random.from(std::vector<std::string>{"NoRaces", "Atomics", "Temporary", "ParallelReduction"});
  };
  if (random.chance(0.7)) {
    std::string outer = position + "0", inner = position + "1";
    int factor = random.from(std::vector<int>{1, 2, 3, 4, 7, 16});
    head.commands.push_back((random.chance(0.8) ? "split(" : "divide(") + position + ", " + outer + ", " + inner +
                            ", " + std::to_string(factor) + ")");
    replace(position, {outer, inner});
    if (random.chance(0.6)) {
      bool vector = random.chance(0.2);
      std::string command = "parallelize(" + (vector ? inner : outer) + (vector ? ", CPUVector, " : ", CPUThread, ") +
                            strategy() + ")";
      if (!c.cudaTarget) head.commands.push_back(command);  // (a cuda case's GPU mapping maps the loops)
    }
  } else if (random.chance(0.4)) {
    std::string command = "parallelize(" + position + ", CPUThread, " + strategy() + ")";
    if (!c.cudaTarget) head.commands.push_back(command);
  }
  return head;
}

// One used variable (sometimes two) gets a dimension past a warp or a
// block, while the iteration space stays small enough for the dense
// reference: the GPU's grid-strided loops, warp shuffles and block
// reductions then see more than one lane's, warp's or block's share.
void widenForTheGpu(Random& random, Case& c, const std::set<std::string>& usedVars) {
  if (usedVars.empty() || random.chance(0.3)) return;
  std::vector<std::string> vars(usedVars.begin(), usedVars.end());
  std::shuffle(vars.begin(), vars.end(), random.engine());
  size_t widened = random.chance(0.25) && vars.size() > 1 ? 2 : 1;
  for (size_t v = 0; v < widened; ++v) {
    int wide = random.from(std::vector<int>{31, 33, 64, 100, 257, 300, 1030});
    long others = 1;
    for (const auto& var : usedVars)
      if (var != vars[v]) others *= c.sizes.at(var);
    while (wide > 31 && others * wide > 200000) wide /= 2;
    c.sizes[vars[v]] = wide;
  }
}

// The statement's terms (GeneratorOptions: products only, the same sums,
// constant terms); the variables they use and the sets they sum over.
void drawRightHandSide(Random& random, Builder& builder, const std::vector<std::string>& outputVars,
                       const std::vector<std::string>& reductionPool, const GeneratorOptions& options,
                       std::set<std::string>& usedVars, std::set<std::vector<std::string>>& summedSets) {
  Case& c = builder.c;
  size_t terms = options.productsOnly ? 1
                 : options.cudaTarget ? 1 + random.weighted({70, 25, 5})
                                      : 1 + random.weighted({45, 40, 15});
  // Terms that sum over different variables go through a sparse workspace,
  // which the cuda target refuses: most of its cases keep one set.
  const bool sameSums = options.sameSumsInEveryTerm || (options.cudaTarget && random.chance(0.8));
  for (size_t t = 0; t < terms; ++t) {
    std::vector<std::string> termVars = outputVars;
    if (t > 0 && !termVars.empty() && random.chance(0.1) && !sameSums)
      termVars.erase(termVars.begin() + static_cast<long>(random.pick(termVars.size())));
    std::vector<std::string> summed = reductionPool;
    std::shuffle(summed.begin(), summed.end(), random.engine());
    summed.resize(random.weighted({35, 45, 20}));
    if (t > 0 && sameSums) summed = *summedSets.begin();
    // A term with no index variable, added to every entry of the output.
    bool constant = options.constantTerms && t > 0 && !sameSums && random.chance(0.3);
    if (constant) termVars.clear(), summed.clear();
    std::vector<std::string> sortedSummed = summed;
    std::sort(sortedSummed.begin(), sortedSummed.end());
    summedSets.insert(sortedSummed);
    termVars.insert(termVars.end(), summed.begin(), summed.end());
    Expr term = constant && random.chance(0.4) ? Expr::number(builder.literal()) : builder.term(termVars, summed);
    if (t == 0) {
      c.rhs = term;
    } else {
      c.rhs = Expr::binary(random.chance(0.5) ? Expr::Kind::Add : Expr::Kind::Sub, c.rhs, term);
    }
    usedVars.insert(termVars.begin(), termVars.end());
  }
}


// Tensors a division reads: their data must stay nonzero, so no statement
// computes them.
void collectDivisors(const Expr& e, std::set<std::string>& divisors) {
  if (e.kind == Expr::Kind::Div && e.operands[1].kind == Expr::Kind::Access) divisors.insert(e.operands[1].tensor);
  for (const auto& operand : e.operands) collectDivisors(operand, divisors);
}

void collectMutableAccesses(Expr& expr, const std::string& tensor, std::vector<Expr*>& accesses) {
  if (expr.kind == Expr::Kind::Access && expr.tensor == tensor) accesses.push_back(&expr);
  for (auto& operand : expr.operands) collectMutableAccesses(operand, tensor, accesses);
}

// An input of `consumer` (a case of one statement) that an earlier
// statement may compute instead: not a divisor; sparse ones and scalars
// drawn more often. Empty where there is none.
std::string intermediateOf(Random& random, const Case& consumer) {
  std::set<std::string> divisors;
  collectDivisors(consumer.rhs, divisors);
  std::vector<std::string> names;
  std::vector<double> weights;
  for (const auto& tensor : consumer.inputs) {
    if (divisors.count(tensor.name)) continue;
    names.push_back(tensor.name);
    weights.push_back(tensor.vars.empty() ? 2.0 : tensor.allDense() ? 1.0 : 3.0);
  }
  if (names.empty()) return "";
  return names[std::discrete_distribution<size_t>(weights.begin(), weights.end())(random.engine())];
}

// About a fifth of a statement's tensors are instead one its consumer reads
// too (an input of both statements; where a third statement computes it,
// an intermediate read by two): the consumer's tensor (name, format, data),
// read at the statement's own variables, which take the consumer's
// dimensions. Only where those variables' dimensions are free or already
// the same.
void shareConsumerInputs(Random& random, Case& stage, const Case& consumer, const std::string& computed,
                         const std::set<std::string>& divisors) {
  std::set<std::string> consumerDivisors;
  collectDivisors(consumer.rhs, consumerDivisors);
  for (auto& own : stage.inputs) {
    if (divisors.count(own.name) || !random.chance(0.2)) continue;
    std::vector<const TensorDecl*> candidates;
    for (const auto& other : consumer.inputs) {
      if (other.name == computed || consumerDivisors.count(other.name) || other.vars.size() != own.vars.size() ||
          stage.findInput(other.name))
        continue;
      bool fits = true;
      for (size_t m = 0; m < own.vars.size(); ++m) {
        auto mapped = stage.sharedDimensions.find(own.vars[m]);
        fits = fits && (mapped == stage.sharedDimensions.end() || mapped->second == other.vars[m]);
      }
      if (fits) candidates.push_back(&other);
    }
    if (candidates.empty()) continue;
    const TensorDecl& other = *candidates[random.pick(candidates.size())];
    std::vector<Expr*> reads;
    collectMutableAccesses(stage.rhs, own.name, reads);
    for (Expr* read : reads) read->tensor = other.name;
    for (size_t m = 0; m < own.vars.size(); ++m) {
      stage.sharedDimensions[own.vars[m]] = other.vars[m];
      stage.sizes[own.vars[m]] = consumer.sizes.at(other.vars[m]);
    }
    std::vector<std::string> vars = own.vars;
    own = other;
    own.vars = vars;
  }
}

// Draws the statement that computes input `name` of `consumer` (a case of
// one statement, which loses the input's data and declaration), as a case
// of one statement itself: `number` ends its variables (`i1`, `j1`, ...)
// and its tensors' names, its output keeps the input's name and format,
// and its output's sizes are those the consumer reads. The consumer reads
// it at permuted indices now and then, where its schedule names no access
// of it.
Case stageComputing(Random& random, Case& consumer, const std::string& name, int number, bool mayPermute,
                    const GeneratorOptions& options) {
  const std::string suffix = std::to_string(number);
  TensorDecl output = *consumer.findInput(name);
  const size_t order = output.vars.size();
  std::vector<Expr*> reads;
  collectMutableAccesses(consumer.rhs, name, reads);
  bool named = false;
  for (const auto& command : consumer.schedule) named = named || command.find(name + "(") != std::string::npos;
  if (order >= 2 && !named && mayPermute && random.chance(0.3)) {
    std::vector<size_t> permutation(order);
    std::iota(permutation.begin(), permutation.end(), 0);
    std::shuffle(permutation.begin(), permutation.end(), random.engine());
    for (Expr* read : reads) {
      std::vector<std::string> vars = read->vars;
      for (size_t m = 0; m < order; ++m) read->vars[m] = vars[permutation[m]];
    }
  }
  Case stage;
  stage.type = consumer.type;
  stage.symbolicSizes = consumer.symbolicSizes;
  stage.cudaTarget = consumer.cudaTarget;
  stage.origin = consumer.origin;
  std::vector<std::string> vars;
  for (const auto& var : kVariables) vars.push_back(var + suffix);
  std::vector<std::string> outputVars(vars.begin(), vars.begin() + static_cast<long>(order));
  std::vector<std::string> reductionPool(vars.begin() + static_cast<long>(order),
                                         vars.begin() + static_cast<long>(order) + 3);
  long outputPoints = 1;
  for (size_t m = 0; m < order; ++m) {
    stage.sizes[outputVars[m]] = consumer.sizes.at(reads.front()->vars[m]);
    stage.sharedDimensions[outputVars[m]] = reads.front()->vars[m];
    outputPoints *= stage.sizes[outputVars[m]];
  }
  for (const auto& var : reductionPool) {
    // (Wide outputs of cuda cases sum over a few points: the dense reference's iteration space stays small.)
    int size = random.from(std::vector<int>{1, 2, 3, 4, 5, 6, 8});
    while (size > 1 && outputPoints * size * size * size > 2000000) size /= 2;
    stage.sizes[var] = size;
  }
  Builder builder{random, stage, {}, options.productsOnly, options.cudaTarget, options.repeatedOperands, {},
                  options.builtins, suffix, true};
  std::set<std::string> usedVars;
  std::set<std::vector<std::string>> summedSets;
  drawRightHandSide(random, builder, outputVars, reductionPool, options, usedVars, summedSets);
  output.vars = outputVars;
  // A unique singleton level outside a coordinate run holds one coordinate
  // per parent, which a computed result (stored zeros of dense operands
  // included) rarely fits: mostly compressed instead (the rest are refused
  // while running, naming the tensor).
  for (size_t l = 1; l < output.levels.size(); ++l) {
    bool inRun = output.levels[l - 1] == LevelKind::CompressedNonunique ||
                 output.levels[l - 1] == LevelKind::SingletonNonunique;
    if (output.levels[l] == LevelKind::Singleton && !inRun && random.chance(0.8)) {
      output.levels[l] = LevelKind::Compressed;
      output.namedFormat.reset();
    }
  }
  stage.output = output;
  for (auto& tensor : stage.inputs) builder.formatOf(tensor, false);
  shareConsumerInputs(random, stage, consumer, name, builder.divisors);
  for (auto it = stage.sizes.begin(); it != stage.sizes.end();)
    it = usedVars.count(it->first) ? std::next(it) : stage.sizes.erase(it);
  for (const auto& tensor : stage.inputs) {
    auto shared = consumer.data.find(tensor.name);
    stage.data[tensor.name] = shared != consumer.data.end()
                                  ? shared->second
                                  : randomData(random, stage, tensor, builder.divisors.count(tensor.name) > 0);
  }
  bool anyNonzero = false;
  for (const auto& [input, coo] : stage.data)
    anyNonzero = anyNonzero || (coo.nnz() > 0 && !builder.divisors.count(input));
  for (const auto& tensor : stage.inputs) {
    if (anyNonzero || builder.divisors.count(tensor.name)) continue;
    rt::Coo coo = rt::randomUniform(dimsOf(stage, tensor), 1.0, random.next());
    for (double& value : coo.values) value = isFloat(stage.type) ? representable(value, stage.type) : 2;
    stage.data[tensor.name] = fitSingletons(coo, tensor);
    anyNonzero = true;
  }
  // A schedule the statement takes on its own (up to four draws, else
  // none): the program's refusals are then mostly of the statements
  // together, not of one statement's random commands. Commands without a
  // variable would apply to every statement: left to the last one.
  std::optional<std::vector<std::string>> loops;
  if (options.scheduledSparseOutputs || random.chance(0.6) || options.posSchedules) loops = defaultLoops(stage);
  for (int draw = 0; loops && draw < 4; ++draw) {
    std::optional<PositionHead> head;
    if (options.posSchedules) head = positionHead(random, stage, *loops);
    stage.schedule =
        randomSchedule(random, stage, head ? head->loops : *loops, options.severalPrecomputes, "f" + suffix);
    if (head) stage.schedule.insert(stage.schedule.begin(), head->commands.begin(), head->commands.end());
    std::erase_if(stage.schedule, [](const std::string& command) {
      return command.rfind("dense_workspace()", 0) == 0 || command.rfind("sparse_workspace()", 0) == 0 ||
             command.rfind("sparse_workspace(policy", 0) == 0;
    });
    if (lowers(stage)) break;
    stage.schedule.clear();
  }
  consumer.data.erase(name);
  consumer.inputs.erase(std::find_if(consumer.inputs.begin(), consumer.inputs.end(),
                                     [&](const TensorDecl& tensor) { return tensor.name == name; }));
  return stage;
}

// GeneratorOptions::chained: one or two earlier statements, each computing
// an input of a later one (a chain of three, or two feeding the last).
void chainEarlierStatements(Case& c, uint64_t seed, const GeneratorOptions& options) {
  Random random(seed ^ 0xC2B2AE3D27D4EB4Full);  // a stream of its own
  std::string first = intermediateOf(random, c);
  if (first.empty()) return;
  std::vector<Case> stages;  // in program order
  Case feedingLast = stageComputing(random, c, first, 1, true, options);
  // (A tensor two statements read is read at permuted indices by neither:
  // their sizes would disagree.)
  if (random.chance(0.45)) {
    if (random.chance(0.5)) {  // three statements in a chain
      std::string second = intermediateOf(random, feedingLast);
      if (!second.empty())
        stages.push_back(stageComputing(random, feedingLast, second, 2, !c.findInput(second), options));
    } else {  // two statements feeding the last
      std::string second = intermediateOf(random, c);
      if (!second.empty())
        stages.push_back(stageComputing(random, c, second, 2, !feedingLast.findInput(second), options));
    }
  }
  stages.push_back(std::move(feedingLast));
  for (auto& stage : stages) {
    c.earlier.push_back(Stage{stage.output, stage.rhs, stage.schedule});
    for (const auto& input : stage.inputs)
      if (!c.findOperand(input.name)) c.inputs.push_back(input);
    for (const auto& [name, coo] : stage.data)
      if (c.findInput(name)) c.data.insert({name, coo});
    c.sizes.insert(stage.sizes.begin(), stage.sizes.end());
    c.sharedDimensions.insert(stage.sharedDimensions.begin(), stage.sharedDimensions.end());
  }
  // An input of several statements that one of them computes after all.
  for (const auto& stage : c.earlier) {
    c.data.erase(stage.output.name);
    std::erase_if(c.inputs, [&](const TensorDecl& input) { return input.name == stage.output.name; });
  }
  c.origin += " (chained)";
}

}  // namespace

// GeneratorOptions::inPlace.
void updateInPlace(Case& c, uint64_t seed) {
  Random random(seed ^ 0x3C6EF372FE94F82Bull);
  Expr before = Expr::access(c.output.name, c.output.vars);
  if (random.chance(0.5)) {
    c.accumulate = true;
  } else {
    const auto kind = random.from(std::vector<Expr::Kind>{Expr::Kind::Add, Expr::Kind::Sub, Expr::Kind::Mul});
    c.rhs = random.chance(0.5) ? Expr::binary(kind, c.rhs, before) : Expr::binary(kind, before, c.rhs);
  }
  c.data[c.output.name] = randomData(random, c, c.output, false);
}

// GeneratorOptions::float16Inputs.
void storeInputsAsFloat16(Case& c, uint64_t seed) {
  if (!isFloat(c.type)) return;
  Random random(seed ^ 0xA54FF53A5F1D36F1ull);
  std::vector<TensorDecl*> chosen;
  for (auto& tensor : c.inputs)
    if (random.chance(0.5)) chosen.push_back(&tensor);
  if (chosen.empty() && !c.inputs.empty()) chosen.push_back(&c.inputs[random.pick(c.inputs.size())]);
  for (TensorDecl* tensor : chosen) {
    std::vector<double>& values = c.data.at(tensor->name).values;
    const std::vector<double> held = rt::heldByFloat16(values);
    for (size_t e = 0; e < values.size(); ++e)  // (flushed to zero, a divisor's value would divide by it)
      values[e] = held[e] == 0 && values[e] != 0 ? 0.5 : held[e];
    tensor->float16 = true;
  }
}

Case generateCase(uint64_t seed, const GeneratorOptions& options) {
  Random random(seed);
  Case c;
  c.origin = "seed " + std::to_string(seed) + (options.cudaTarget ? " (cuda)" : "");
  c.cudaTarget = options.cudaTarget;
  c.type = std::vector<ElementType>{ElementType::Float64, ElementType::Float32, ElementType::Int32,
                                    ElementType::Int64}[options.cudaTarget ? random.weighted({20, 70, 5, 5})
                                                                           : random.weighted({55, 20, 12.5, 12.5})];
  // (Operands read at other indices need integer sizes.)
  c.symbolicSizes = random.chance(options.repeatedOperands ? 0.4 : 0.7);
  // The cuda target maps loops, so a scalar output with nothing to sum is
  // only refused there.
  size_t outputOrder = options.cudaTarget ? random.weighted({5, 35, 35, 20, 5}) : random.weighted({10, 35, 35, 15, 5});
  std::vector<std::string> outputVars(kVariables.begin(), kVariables.begin() + static_cast<long>(outputOrder));
  std::vector<std::string> reductionPool(kVariables.begin() + static_cast<long>(outputOrder),
                                         kVariables.begin() + static_cast<long>(outputOrder) + 3);
  for (const auto& var : kVariables) c.sizes[var] = random.from(std::vector<int>{1, 2, 3, 4, 5, 6, 8});

  Builder builder{random, c, {}, options.productsOnly, options.cudaTarget, options.repeatedOperands, {},
                  options.builtins, "", false};
  std::set<std::string> usedVars;
  std::set<std::vector<std::string>> summedSets;
  drawRightHandSide(random, builder, outputVars, reductionPool, options, usedVars, summedSets);
  if (options.cudaTarget) widenForTheGpu(random, c, usedVars);
  c.output.name = "Y";
  c.output.vars = outputVars;
  if (options.permutedOutputs && outputVars.size() >= 2) {
    Random permutation(seed ^ 0x5DEECE66Dull);  // a stream of its own
    while (c.output.vars == outputVars) std::shuffle(c.output.vars.begin(), c.output.vars.end(), permutation.engine());
  }
  builder.formatOf(c.output, true);
  if (options.scheduledSparseOutputs && !c.output.levels.empty() && c.output.allDense())
    c.output.levels.back() = LevelKind::Compressed;
  for (auto& tensor : c.inputs) builder.formatOf(tensor, false);

  // Real matrices fix the sizes of the two variables they are read with.
  std::string realName;
  std::string realTensor;
  bool haveRealMatrices =
      !options.sharedDataDir.empty() && std::filesystem::is_directory(options.sharedDataDir + "/matrices");
  if (haveRealMatrices && usedVars.size() <= 3 && random.chance(0.1)) {
    // (Not a tensor also read at other indices: their sizes must stay equal.)
    std::vector<const Expr*> accesses;
    collectAccesses(c.rhs, accesses);
    auto readElsewhere = [&](const TensorDecl& tensor) {
      for (const Expr* access : accesses)
        if (access->tensor == tensor.name && access->vars != tensor.vars) return true;
      return false;
    };
    for (const auto& tensor : c.inputs) {
      if (tensor.vars.size() == 2 && !builder.divisors.count(tensor.name) && !readElsewhere(tensor)) {
        realName = random.from(kRealMatrices);
        realTensor = tensor.name;
        const rt::Coo& matrix = realMatrix(options.sharedDataDir, realName);
        c.sizes[tensor.vars[0]] = matrix.dims[0];
        c.sizes[tensor.vars[1]] = matrix.dims[1];
        if (tensor.vars[0] == tensor.vars[1]) realTensor.clear();
        break;
      }
    }
  }
  for (auto it = c.sizes.begin(); it != c.sizes.end();) it = usedVars.count(it->first) ? std::next(it) : c.sizes.erase(it);

  for (const auto& tensor : c.inputs) {
    if (tensor.name == realTensor) {
      rt::Coo matrix = realMatrix(options.sharedDataDir, realName);
      for (double& value : matrix.values) {
        if (!isFloat(c.type)) value = value < 0 ? -1 - (static_cast<int>(-value) % 3) : 1 + (static_cast<int>(value) % 3);
        value = representable(value, c.type);
      }
      c.data[tensor.name] = fitSingletons(matrix, tensor);
      c.origin += " (" + tensor.name + " = " + realName + ")";
    } else {
      c.data[tensor.name] = randomData(random, c, tensor, builder.divisors.count(tensor.name) > 0);
    }
  }
  bool anyNonzero = false;
  for (const auto& [name, coo] : c.data) anyNonzero = anyNonzero || (coo.nnz() > 0 && !builder.divisors.count(name));
  if (!anyNonzero) {
    for (const auto& tensor : c.inputs) {
      if (builder.divisors.count(tensor.name)) continue;
      rt::Coo coo = rt::randomUniform(dimsOf(c, tensor), 1.0, random.next());
      for (double& value : coo.values) value = isFloat(c.type) ? representable(value, c.type) : 2;
      c.data[tensor.name] = fitSingletons(coo, tensor);
      break;
    }
  }
  // Statements whose terms sum over different variables were first
  // scheduled by no command: such cases mostly go unscheduled, as they
  // always did (GeneratorOptions::nestedSumSchedules draws the rest).
  double scheduled = options.cudaTarget ? 0.7 : summedSets.size() > 1 ? 0.15 : 0.6;
  const bool drawSchedule = options.scheduledSparseOutputs || random.chance(scheduled);
  // From a stream of its own, so that the case is the one the seed gives
  // without the flag, its schedule added: 0.15 + 0.85 * 0.53 = 0.6.
  Random nested(seed ^ 0x6A09E667F3BCC909ull);
  const bool drawNested = !drawSchedule && options.nestedSumSchedules && !options.cudaTarget &&
                          summedSets.size() > 1 && nested.chance(0.53);
  std::optional<std::vector<std::string>> loops;
  if (drawSchedule || drawNested || options.posSchedules) loops = defaultLoops(c);
  std::optional<PositionHead> head;
  if (options.posSchedules && loops) {
    Random positions(seed ^ 0xB5297A4D3F84D5B5ull);  // a stream of its own
    head = positionHead(positions, c, *loops);
  }
  if (drawSchedule && loops)
    c.schedule = randomSchedule(random, c, head ? head->loops : *loops, options.severalPrecomputes);
  if (drawNested && loops)
    c.schedule = randomSchedule(nested, c, head ? head->loops : *loops, options.severalPrecomputes);
  if (head) c.schedule.insert(c.schedule.begin(), head->commands.begin(), head->commands.end());
  // Fast floating point (FMA, reassociated and vectorized sums) on a third
  // of the cases, checked within the same tolerance. Drawn last, so a
  // seed's expression, data and schedule do not depend on it.
  c.fastFp = random.chance(1.0 / 3);
  if (options.chained) chainEarlierStatements(c, seed, options);
  if (options.inPlace) updateInPlace(c, seed);
  if (options.float16Inputs) storeInputsAsFloat16(c, seed);
  return c;
}

}  // namespace tcc::differential
