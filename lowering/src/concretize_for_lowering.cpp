#include "tcc/lowering/concretize_for_lowering.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "tcc/ir/builder.h"
#include "tcc/ir/concretize.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"
#include "tcc/lowering/inserted_tensor_names.h"
#include "tcc/ir/index_visitor.h"
#include "tcc/lowering/lower.h"
#include "access_occurrences.h"
#include "merge_lattice.h"
#include "schedule_loops.h"
#include "schedule_nested_sums.h"
#include "statement_terms.h"

namespace tcc::lowering {

namespace {

using ir::Access;
using ir::IndexExpr;
using ir::IndexStmt;
using ir::IndexVar;
using ir::TensorVar;

}  // namespace

bool hasSparseLevel(const TensorVar& tensor) {
  return tensor.order() > 0 && !tensor.format().isAllDense();
}

// The access's index variables in the order its levels store them.
std::vector<IndexVar> varsInStorageOrder(const Access& access) {
  std::vector<IndexVar> vars;
  const auto& format = access.tensor().format();
  for (int level = 0; level < format.order(); ++level) vars.push_back(access.indices()[format.modeOfLevel(level)]);
  return vars;
}

std::optional<TensorVar> convertedFrom(const TensorVar& tensor) {
  const ir::TensorProvenance& provenance = tensor.provenance();
  if (provenance.kind != ir::TensorProvenance::Kind::StorageOrderCopy) return std::nullopt;
  return provenance.source;
}

std::string tensorInWords(const Access& access) {
  if (auto input = convertedFrom(access.tensor())) return "the copy of " + input->name() + " in the loops' order";
  return access.tensor().name();
}

namespace {

using Edges = std::set<std::pair<IndexVar, IndexVar>>;

void addChain(Edges& edges, const std::vector<IndexVar>& chain) {
  for (size_t l = 0; l + 1 < chain.size(); ++l)
    if (!(chain[l] == chain[l + 1])) edges.insert({chain[l], chain[l + 1]});
}

// Kahn's algorithm, taking the most preferred available variable each step.
std::optional<std::vector<IndexVar>> topologicalOrder(const std::vector<IndexVar>& preference, const Edges& edges) {
  std::vector<IndexVar> order;
  std::set<IndexVar> placed;
  while (order.size() < preference.size()) {
    bool progress = false;
    for (const auto& candidate : preference) {
      if (placed.count(candidate)) continue;
      bool ready = std::none_of(edges.begin(), edges.end(), [&](const auto& edge) {
        return edge.second == candidate && !placed.count(edge.first);
      });
      if (!ready) continue;
      order.push_back(candidate);
      placed.insert(candidate);
      progress = true;
      break;
    }
    if (!progress) return std::nullopt;
  }
  return order;
}

}  // namespace

void appendUnique(std::vector<IndexVar>& list, const std::vector<IndexVar>& vars) {
  for (const auto& var : vars)
    if (std::find(list.begin(), list.end(), var) == list.end()) list.push_back(var);
}

namespace {

// The loop of the first summed variable, and the output variables whose
// loops come after it (empty when none does: the output is appended in
// the loops' order).
struct TrailingOutputVars {
  size_t firstReduction = 0;
  std::set<IndexVar> vars;
};

TrailingOutputVars trailingOutputVars(const LoopNest& nest, const Access& lhs) {
  auto outputVars = varsInStorageOrder(lhs);
  auto isOutputLoop = [&](const IndexVar& loop) {
    for (const auto& origin : nest.originsOf(loop))
      if (std::find(outputVars.begin(), outputVars.end(), origin) == outputVars.end()) return false;
    return true;
  };
  TrailingOutputVars result{nest.loops.size(), {}};
  for (size_t p = 0; p < nest.loops.size(); ++p)
    if (!isOutputLoop(nest.loops[p])) { result.firstReduction = p; break; }
  for (size_t p = result.firstReduction; p < nest.loops.size(); ++p)
    if (isOutputLoop(nest.loops[p])) {
      auto origins = nest.originsOf(nest.loops[p]);
      result.vars.insert(origins.begin(), origins.end());
    }
  return result;
}

// A summed variable between a sparse output's variables: the trailing
// output coordinates would arrive out of order, so they are computed into a
// dense workspace (Gustavson's algorithm) unless the schedule placed one.
// Returns false when the trailing coordinates span more than the output's
// last level: dense workspaces cannot help, a sparse one must.
bool insertGustavsonWorkspace(LoopNest& nest, const Access& lhs, const IndexExpr& rhs) {
  const TensorVar& output = lhs.tensor();
  auto outputVars = varsInStorageOrder(lhs);
  auto [firstReduction, trailing] = trailingOutputVars(nest, lhs);
  if (trailing.empty()) return true;
  if (trailing.size() != 1 || !(*trailing.begin() == outputVars.back())) return false;
  const IndexVar& j = outputVars.back();
  nest.precomputes.push_back({PrecomputeCommand{rhs, j, j}, std::nullopt, "", denseWorkspaceName(output, nest.takenNames)});
  std::vector<IndexVar> common(nest.loops.begin(), nest.loops.begin() + firstReduction);
  nest.decisions.push_back("summing over " + nest.loops[firstReduction].name() + " between " + output.name() +
                           "'s coordinates would append " + j.name() + " out of order: inserted dense workspace " +
                           nest.precomputes.back().workspaceName + "(" + j.name() +
                           ") with a list of touched coordinates (Gustavson)");
  nest.decisions.push_back("dense workspace optimization (§6.2): the loop order sums over " +
                           nest.loops[firstReduction].name() + " and only " + j.name() + " follows it" +
                           (common.empty() ? std::string()
                                           : ", under the hoisted common iteration over " + joinNames(common)) +
                           "; sparse_workspace(" + j.name() + ") asks for a sparse first-order workspace instead");
  return true;
}

// Whether the outermost loop, on CPU threads over a sparse output's first
// index (its first level compressed, or dense levels above its compressed
// ones), runs in ranges of coordinates whose appends keep the output's
// order (lower_coordinate_chunks.cpp): the loops
// in the output's storage order (nothing summed, nothing scattered; or a
// sum before the last index only, into Gustavson's workspace), the
// other loops serial, and the operands' levels for the variable dense or
// ordered compressed (as Lowerer::mergesInCoordinateChunks decides). Each
// range then appends
// its part of the output itself: a pass counts every range's appends, a
// prefix sum over the ranges gives each its offsets, a second pass
// appends. `whyNot` says why not.
bool threadRangesAppendInOrder(const LoopNest& nest, const Access& lhs, const IndexExpr& rhs, std::string& whyNot) {
  const TensorVar& output = lhs.tensor();
  const ir::Format& format = output.format();
  const int firstSparse = format.firstSparseLevel();
  if (firstSparse == format.order() || format.level(firstSparse).kind != ir::LevelKind::Compressed ||
      !format.level(firstSparse).unique) {
    whyNot = "only compressed levels (below dense ones, if any) are appended by ranges of coordinates";
    return false;
  }
  const IndexVar& first = lhs.indices()[format.modeOfLevel(0)];
  auto attributes = nest.attributes.find(nest.loops[0]);
  if (!(nest.loops[0] == first) || !nest.relations.empty()) {
    whyNot = "the thread loop is not over " + first.name() + ", " + output.name() + "'s first index, itself";
    return false;
  }
  if (attributes->second.outputRaceStrategy == ir::OutputRaceStrategy::Workspace) {
    whyNot = "the schedule asks for the Workspace race strategy";
    return false;
  }
  // (Or Gustavson's: a sum between the output's last index and those
  // above it, which the dense workspace inserted below the loops above it
  // takes in any order, insertGustavsonWorkspace.)
  const std::vector<IndexVar> outputVars = varsInStorageOrder(lhs);
  const TrailingOutputVars trailing = trailingOutputVars(nest, lhs);
  const bool gustavson = trailing.vars.size() == 1 && *trailing.vars.begin() == outputVars.back() &&
                         trailing.firstReduction + 1 == outputVars.size() &&
                         std::equal(outputVars.begin(), outputVars.end() - 1, nest.loops.begin());
  if (nest.loops != outputVars && !gustavson) {
    whyNot = "the loops are not " + output.name() + "'s indices in its storage order, so a range would not append "
             "its part in order";
    return false;
  }
  for (size_t p = 1; p < nest.loops.size(); ++p)
    if (auto inner = nest.attributes.find(nest.loops[p]);
        inner != nest.attributes.end() && inner->second.parallelUnit != ir::ParallelUnit::NotParallel) {
      whyNot = "the loop over " + nest.loops[p].name() + " is parallel too";
      return false;
    }
  // Each operand's level for `first` is cut by a binary search of its
  // coordinates (or is dense). Whether the loop merges several operands,
  // follows one unique level's positions, or runs over the plain
  // coordinates, a range covers the coordinates [first, stop).
  for (const auto& access : ir::accessesOf(rhs)) {
    const ir::Format& operand = access.tensor().format();
    if (access.tensor().order() == 0 || operand.isAllDense()) continue;
    for (int level = 0; level < operand.order(); ++level) {
      if (!(access.indices()[operand.modeOfLevel(level)] == first)) continue;
      const ir::LevelFormat& stored = operand.level(level);
      if (level > 0 || !(stored.isDense() || (stored.kind == ir::LevelKind::Compressed && stored.ordered))) {
        whyNot = access.tensor().name() + " stores " + first.name() + " at a " + stored.toString() + " level " +
                 std::to_string(level + 1) + ", which no binary search cuts into ranges";
        return false;
      }
    }
  }
  return true;
}

// What a loop on threads implies for the output and the workspace.
// Whether the outermost loop runs on CPU threads over a sparse output that
// they cannot assemble in place. Threads append in place only the rows of a
// {dense, compressed} matrix, under a loop over its first index (count,
// prefix sum, fill), and (threadRangesAppendInOrder, checked by the caller)
// an output whose first level is compressed, under a loop over its first
// index that runs in ranges of coordinates; every other sparse output
// (COO, DCSR under other loops, ...) goes through one sparse workspace per
// thread and a parallel merge.
bool threadsCannotAssembleInPlace(const LoopNest& nest, const Access& lhs) {
  const TensorVar& output = lhs.tensor();
  if (!hasSparseLevel(output) || nest.loops.empty()) return false;
  auto attributes = nest.attributes.find(nest.loops[0]);
  if (attributes == nest.attributes.end() || !attributes->second.onThreads()) return false;
  const ir::Format& format = output.format();
  auto origins = nest.originsOf(nest.loops[0]);
  bool rows = format.order() == 2 && format.level(0).isDense() && format.level(1).kind == ir::LevelKind::Compressed &&
              format.level(1).unique && origins.size() == 1 &&
              *origins.begin() == lhs.indices()[format.modeOfLevel(0)];
  return !rows;
}

void describeThreadLoops(LoopNest& nest, const Access& lhs) {
  const TensorVar& output = lhs.tensor();
  for (size_t p = 0; p < nest.loops.size(); ++p) {
    auto attributes = nest.attributes.find(nest.loops[p]);
    if (attributes == nest.attributes.end() || !attributes->second.onThreads()) continue;
    auto origins = nest.originsOf(nest.loops[p]);
    if (hasSparseLevel(output) && output.order() == 2 && output.format().level(0).isDense() && origins.size() == 1 &&
        *origins.begin() == lhs.indices()[output.format().modeOfLevel(0)])
      nest.decisions.push_back(output.name() + "'s rows are assembled in parallel: in one pass where the operands "
                               "bound its entries (each thread appends chunks of rows to arrays of its own, then "
                               "copies them to their offsets), else a pass counts each row's entries, a prefix sum "
                               "turns the counts into offsets, a second pass fills the rows");
    for (const auto& precompute : nest.precomputes) {
      bool above = false;
      for (size_t q = p + 1; q < nest.loops.size() && !above; ++q)
        for (const auto& origin : nest.originsOf(nest.loops[q]))
          if (origin == precompute.command.var) above = true;
      if (above) nest.decisions.push_back("each thread fills its own copy of the workspace " + precompute.workspaceName);
    }
  }
}


// Sparse inputs whose storage orders admit no common loop order (A(i,j) in
// DCSC times B(i,j) in CSR; A(i,j) + B(j,i) both CSR): one access at a time
// is read from a copy stored in an order the others agree with. Sizes are
// unknown at compile time, so the copy is of the access whose order
// disagrees with a sparse output's (so that the output is still appended in
// order), else of the last such access in the expression.
struct InputConversion {
  Access original, converted;
};

// The access read from a copy of its tensor whose modes are stored in the
// order `modes` lists them; sparse levels become unique compressed ones,
// which hold any data in any order (a singleton or non-unique level may not).
InputConversion storageOrderCopyOf(const Access& access, const std::vector<int>& modes,
                                   std::set<std::string>& takenNames) {
  const TensorVar& tensor = access.tensor();
  std::vector<ir::LevelFormat> levels;
  for (int level = 0; level < tensor.format().order(); ++level)
    levels.push_back(tensor.format().level(level).isDense() ? ir::LevelFormat::dense() : ir::LevelFormat::compressed());
  std::string name = tensor.name() + "_by";
  for (int mode : modes) name += "_" + access.indices()[mode].name();
  TensorVar copy(takeFreshName(name, takenNames), tensor.shape(), ir::Format(levels, modes), tensor.datatype(),
                 ir::TensorProvenance::storageOrderCopy(tensor));
  return InputConversion{access, copy(access.indices())};
}

std::optional<InputConversion> convertOneDisagreeingInput(const Access& lhs, const IndexExpr& rhs,
                                                          std::set<std::string>& takenNames,
                                                          const std::vector<std::string>& keptInOrder = {},
                                                          const std::vector<Access>& keptAccesses = {}) {
  std::vector<Access> sparse;
  for (const auto& access : ir::accessesOf(rhs))
    if (hasSparseLevel(access.tensor())) sparse.push_back(access);
  std::vector<IndexVar> vars = ir::indexVarsOf(rhs);
  auto edgesWithout = [&](size_t skipped) {
    Edges edges;
    for (size_t a = 0; a < sparse.size(); ++a)
      if (a != skipped) addChain(edges, varsInStorageOrder(sparse[a]));
    return edges;
  };
  if (topologicalOrder(vars, edgesWithout(sparse.size()))) return std::nullopt;
  Edges outputEdges;
  if (hasSparseLevel(lhs.tensor())) addChain(outputEdges, varsInStorageOrder(lhs));
  auto disagreesWithOutput = [&](const Access& access) {
    Edges edges = outputEdges;
    addChain(edges, varsInStorageOrder(access));
    return !topologicalOrder(vars, edges);
  };
  std::vector<size_t> candidates;
  for (size_t a = sparse.size(); a-- > 0;)
    if (disagreesWithOutput(sparse[a])) candidates.push_back(a);
  for (size_t a = sparse.size(); a-- > 0;)
    if (!disagreesWithOutput(sparse[a])) candidates.push_back(a);
  for (size_t candidate : candidates) {
    const Access& access = sparse[candidate];
    if (std::find(keptInOrder.begin(), keptInOrder.end(), access.tensor().name()) != keptInOrder.end()) continue;
    if (std::find(keptAccesses.begin(), keptAccesses.end(), access) != keptAccesses.end()) continue;
    std::set<IndexVar> distinct(access.indices().begin(), access.indices().end());
    if (distinct.size() != access.indices().size()) continue;  // a diagonal keeps its order
    Edges others = edgesWithout(candidate);
    Edges preferred = others;
    preferred.insert(outputEdges.begin(), outputEdges.end());
    auto order = topologicalOrder(vars, preferred);
    if (!order) order = topologicalOrder(vars, others);
    if (!order) continue;
    // Modes take the order the loops visit them in.
    std::vector<int> modes(access.indices().size());
    for (size_t m = 0; m < modes.size(); ++m) modes[m] = static_cast<int>(m);
    auto position = [&](int mode) {
      return std::find(order->begin(), order->end(), access.indices()[mode]) - order->begin();
    };
    std::stable_sort(modes.begin(), modes.end(), [&](int a, int b) { return position(a) < position(b); });
    return storageOrderCopyOf(access, modes, takenNames);
  }
  return std::nullopt;
}

bool containsReduction(const IndexExpr& e) {
  switch (e.kind()) {
    case ir::IndexExprKind::Reduction: return true;
    case ir::IndexExprKind::Neg: return containsReduction(e.as<ir::NegNode>()->operand);
    case ir::IndexExprKind::Add: return containsReduction(e.as<ir::AddNode>()->a) || containsReduction(e.as<ir::AddNode>()->b);
    case ir::IndexExprKind::Sub: return containsReduction(e.as<ir::SubNode>()->a) || containsReduction(e.as<ir::SubNode>()->b);
    case ir::IndexExprKind::Mul: return containsReduction(e.as<ir::MulNode>()->a) || containsReduction(e.as<ir::MulNode>()->b);
    case ir::IndexExprKind::Div: return containsReduction(e.as<ir::DivNode>()->a) || containsReduction(e.as<ir::DivNode>()->b);
    case ir::IndexExprKind::Call: {
      for (const auto& arg : e.as<ir::CallNode>()->args)
        if (const auto* operand = std::get_if<IndexExpr>(&arg); operand && containsReduction(*operand)) return true;
      return false;
    }
    default: return false;
  }
}

}  // namespace

namespace {

// The terms of `rhs`'s top-level + and -, or none when a term holds a sum
// below its own top (a product of sums, say).
std::optional<std::vector<SignedTerm>> topLevelTerms(const IndexExpr& rhs) {
  std::vector<SignedTerm> terms;
  bool simple = true;
  auto collect = [&](auto&& self, const IndexExpr& expr, bool negated) -> void {
    if (const auto* add = expr.as<ir::AddNode>()) {
      self(self, add->a, negated);
      self(self, add->b, negated);
      return;
    }
    if (const auto* sub = expr.as<ir::SubNode>()) {
      self(self, sub->a, negated);
      self(self, sub->b, !negated);
      return;
    }
    SignedTerm term;
    term.negated = negated;
    term.body = expr;
    while (const auto* sum = term.body.as<ir::ReductionNode>()) {
      term.summed.push_back(sum->var);
      term.body = sum->body;
    }
    if (containsReduction(term.body)) simple = false;
    terms.push_back(term);
  };
  collect(collect, rhs, false);
  if (!simple) return std::nullopt;
  return terms;
}

// The loops over the output's indices in the scalar-temporary
// concretization: a sparse output's storage order (it is appended in
// order); else, where one exists, an order in which every sparse input
// stores the output's variables it reads above one another as the loops
// nest them (the output's storage order preferred): `Y(i,j) = B(i,j,k) *
// A(i,j,k) + ...` with Y dense column-major and B row-major loops over i
// outside j, which B's levels allow.
std::vector<IndexVar> outputLoopOrder(const Access& lhs, const IndexExpr& rhs) {
  std::vector<IndexVar> storage;
  appendUnique(storage, varsInStorageOrder(lhs));
  if (hasSparseLevel(lhs.tensor())) return storage;
  Edges edges;
  for (const auto& access : ir::accessesOf(rhs)) {
    if (!hasSparseLevel(access.tensor())) continue;
    std::vector<IndexVar> chain;
    for (const auto& var : varsInStorageOrder(access))
      if (std::find(storage.begin(), storage.end(), var) != storage.end()) chain.push_back(var);
    addChain(edges, chain);
  }
  return topologicalOrder(storage, edges).value_or(storage);
}

// Whether the scalar-temporary concretization (loops over the output's
// indices in the order `outer`, each term's sums inside them) visits every
// sparse input in storage order and appends a sparse output in order.
bool oneLoopOrderFitsEveryTerm(const Access& lhs, const std::vector<IndexVar>& outer,
                               const std::vector<SignedTerm>& terms) {
  if (hasSparseLevel(lhs.tensor()) && varsInStorageOrder(lhs) != lhs.indices()) return false;
  for (const auto& term : terms) {
    std::vector<IndexVar> order = outer;
    appendUnique(order, term.summed);
    for (const auto& access : ir::accessesOf(term.body)) {
      if (!hasSparseLevel(access.tensor())) continue;
      long previous = -1;
      for (const auto& var : varsInStorageOrder(access)) {
        long position = std::find(order.begin(), order.end(), var) - order.begin();
        if (position <= previous) return false;
        previous = position;
      }
    }
  }
  return true;
}

// A sparse input of a statement with sums below its top whose storage order
// disagrees with the loops around it in the scalar-temporary concretization
// (the outer loops `outer`, then each enclosing sum's loop inside the sums
// around it): `y(i) = sum(j, B(i,j) * ...)` with B stored j above i. It is
// read from a copy stored in the loops' order, as convertOneDisagreeingInput
// makes them. `kept` accesses (a pos's) keep their order; copies are not
// copied again (an access read in two places that want different orders is
// left to the lowering's refusal).
std::optional<InputConversion> convertOneNestedInput(const IndexExpr& rhs, const std::vector<IndexVar>& outer,
                                                     std::set<std::string>& takenNames,
                                                     const std::vector<std::string>& keptInOrder,
                                                     const std::vector<Access>& kept) {
  struct Finder : ir::IndexNotationVisitor {
    std::vector<IndexVar> loops;
    std::optional<std::pair<Access, std::vector<int>>> found;  // the access, its modes in the loops' order
    const std::vector<std::string>* keptInOrder = nullptr;
    const std::vector<Access>* kept = nullptr;
    using ir::IndexNotationVisitor::visit;
    void visit(const ir::ReductionNode* node) override {
      loops.push_back(node->var);
      walk(node->body);
      loops.pop_back();
    }
    void visit(const ir::AccessNode* node) override {
      if (found || !hasSparseLevel(node->tensor) || convertedFrom(node->tensor)) return;
      Access access = ir::AccessNode::make(node->tensor, node->indices);
      if (std::find(keptInOrder->begin(), keptInOrder->end(), node->tensor.name()) != keptInOrder->end()) return;
      if (std::find(kept->begin(), kept->end(), access) != kept->end()) return;
      std::set<IndexVar> distinct(node->indices.begin(), node->indices.end());
      if (distinct.size() != node->indices.size()) return;  // a diagonal keeps its order
      // The innermost loop over a variable binds it (a sum may shadow one).
      auto position = [&](const IndexVar& var) -> long {
        auto at = std::find(loops.rbegin(), loops.rend(), var);
        return at == loops.rend() ? -1 : static_cast<long>(loops.rend() - at) - 1;
      };
      long previous = -1;
      bool inOrder = true;
      for (const auto& var : varsInStorageOrder(access)) {
        long p = position(var);
        if (p < 0) return;
        if (p <= previous) inOrder = false;
        previous = p;
      }
      if (inOrder) return;
      std::vector<int> modes(node->indices.size());
      for (size_t m = 0; m < modes.size(); ++m) modes[m] = static_cast<int>(m);
      std::stable_sort(modes.begin(), modes.end(),
                       [&](int a, int b) { return position(node->indices[a]) < position(node->indices[b]); });
      found = std::make_pair(access, modes);
    }
  } finder;
  finder.loops = outer;
  finder.keptInOrder = &keptInOrder;
  finder.kept = &kept;
  finder.walk(rhs);
  if (!finder.found) return std::nullopt;
  const auto& [access, modes] = *finder.found;
  return storageOrderCopyOf(access, modes, takenNames);
}

}  // namespace

// The loops that insert one term into a workspace holding the whole output:
// its sparse inputs in storage order (one converted if they disagree), the
// output's storage order where they leave a choice; indices of the output
// that the term does not use are looped over innermost (a broadcast).
std::vector<IndexVar> termLoopOrder(const Access& lhs, SignedTerm& term, std::vector<std::string>& decisions,
                                    std::vector<std::pair<std::string, TensorVar>>& convertedInputs,
                                    std::set<std::string>& takenNames, const std::vector<Access>& keptAccesses) {
  while (auto conversion = convertOneDisagreeingInput(lhs, term.body, takenNames, {}, keptAccesses)) {
    // Terms that convert the same input alike (the same input into the
    // same order) read one copy: the same tensor, which the kernel declares
    // once (tensors compare by identity).
    TensorVar copy = conversion->converted.tensor();
    auto known = std::find_if(convertedInputs.begin(), convertedInputs.end(), [&](const auto& entry) {
      return entry.second.provenance().source == copy.provenance().source && entry.second.format() == copy.format();
    });
    if (known == convertedInputs.end())
      convertedInputs.emplace_back(conversion->original.tensor().name(), copy);
    else
      copy = known->second;
    IndexExpr read = Access(copy(conversion->original.indices()));
    term.body = ir::replace(term.body, {{IndexExpr(conversion->original), read}});
    for (auto& [original, earlier] : term.readFromCopies)
      earlier = ir::replace(earlier, {{IndexExpr(conversion->original), read}});
    term.readFromCopies.emplace(IndexExpr(conversion->original), read);
    decisions.push_back("the sparse inputs of the term " + ir::toString(term.body) + " admit no common loop order: " +
                        ir::toString(conversion->original) + " is read from a copy " + copy.name() + " stored " +
                        copy.format().toString() + ", converted when the kernel runs");
  }
  std::vector<IndexVar> preference = varsInStorageOrder(lhs);
  Edges inputEdges, outputEdges;
  addChain(outputEdges, varsInStorageOrder(lhs));
  for (const auto& access : ir::accessesOf(term.body)) {
    if (!hasSparseLevel(access.tensor())) continue;
    addChain(inputEdges, varsInStorageOrder(access));
  }
  appendUnique(preference, term.summed);
  appendUnique(preference, ir::indexVarsOf(term.body));
  std::vector<IndexVar> used = ir::indexVarsOf(term.body);
  std::vector<IndexVar> ordered;
  for (const auto& var : preference)
    if (std::find(used.begin(), used.end(), var) != used.end()) ordered.push_back(var);
  Edges allEdges = inputEdges;
  allEdges.insert(outputEdges.begin(), outputEdges.end());
  auto order = topologicalOrder(ordered, allEdges);
  if (!order) order = topologicalOrder(ordered, inputEdges);
  if (!order)
    throw LoweringError("the sparse inputs of the term " + ir::toString(term.body) +
                        " disagree on the loop order; convert one input to a format whose mode order matches the others");
  appendUnique(*order, varsInStorageOrder(lhs));
  return *order;
}

// A loop of `concrete` on CPU threads whose variable derives from one that
// `lhs` is not indexed by: its iterations would add into the same entries
// of lhs. (Vector lanes are the lowerer's to check: a workspace's insert
// is a call that lanes cannot share, so no workspace would take them.)
std::optional<IndexVar> loopSummedOnThreads(const IndexStmt& concrete, const Access& lhs) {
  std::vector<ir::ProvenanceRelation> relations;
  for (const auto* scheduled : statementsOf<ir::SuchThatNode>(concrete))
    relations.insert(relations.end(), scheduled->relations.begin(), scheduled->relations.end());
  const auto& indices = lhs.indices();
  for (const auto* loop : statementsOf<ir::ForallNode>(concrete)) {
    if (loop->attributes.parallelUnit != ir::ParallelUnit::CPUThread &&
        loop->attributes.parallelUnit != ir::ParallelUnit::DefaultUnit)
      continue;
    for (const auto& origin : ir::originVars(loop->indexVar, relations))
      if (std::find(indices.begin(), indices.end(), origin) == indices.end()) return loop->indexVar;
  }
  return std::nullopt;
}

std::set<std::string> namesTakenIn(const ir::AssignmentNode& assignment, const ScheduleRequest& request) {
  std::set<std::string> taken = request.takenNames;
  taken.insert(assignment.lhs.tensor().name());
  for (const auto& tensor : ir::tensorsRead(assignment.rhs)) taken.insert(tensor.name());
  return taken;
}

ConcretizedStatement concretizeForLowering(const IndexStmt& statement, const ScheduleRequest& request) {
  if (ir::isConcrete(statement) && !ir::isEinsum(statement)) {
    ConcretizedStatement given;
    given.stmt = statement;
    given.decisions = {"already concrete"};
    return given;
  }
  const auto* assignment = statement.as<ir::AssignmentNode>();
  if (!assignment) throw LoweringError("expected one tensor assignment to compile");
  for (size_t c = 0; c < request.commands.size(); ++c)
    if (std::holds_alternative<SparsePrecomputeCommand>(request.commands[c].kind))
      return precomputeIntoSparseWorkspace(*assignment, request, c);
  std::set<std::string> takenNames = namesTakenIn(*assignment, request);

  // Peel top-level sums; a sum nested deeper is left to ir::concretize,
  // which computes it into a scalar temporary.
  IndexStmt reduced = ir::makeReductionNotation(statement);
  IndexExpr rhs = reduced.as<ir::AssignmentNode>()->rhs;
  std::vector<IndexVar> reductionVars;
  while (const auto* sum = rhs.as<ir::ReductionNode>()) {
    reductionVars.push_back(sum->var);
    rhs = sum->body;
  }
  bool nestedSum = containsReduction(rhs);
  if (nestedSum && reductionVars.empty()) {
    // Terms that reduce over different variables: when no one loop order
    // fits them all, or sparse_workspace asks, each term fills a sparse
    // workspace in a loop nest of its own (or adds into a dense output
    // directly), which the other commands schedule.
    const Access& lhs = assignment->lhs;
    auto terms = topLevelTerms(rhs);
    auto isWorkspaceCommand = [](const auto& c) { return std::holds_alternative<SparseWorkspaceCommand>(c.kind); };
    bool onlyWorkspaceCommands = !request.commands.empty() &&
                                 std::all_of(request.commands.begin(), request.commands.end(), isWorkspaceCommand);
    bool workspaceAsked = std::any_of(request.commands.begin(), request.commands.end(), isWorkspaceCommand);
    if (terms && lhs.tensor().order() > 0 && (workspaceAsked || !oneLoopOrderFitsEveryTerm(lhs, outputLoopOrder(lhs, rhs), *terms))) {
      LoopNest nest;
      nest.loops = lhs.indices();
      // A dense output takes the terms' sums itself (each term's nest adds
      // into it), unless, on the cpu target, sparse_workspace asks for the
      // workspace or a parallel loop sums (below). On the cuda target a
      // sparse_workspace command has no effect once its own checks pass
      // (see takeWorkspaceIntoDenseOutputOnGpu).
      bool addIntoOutput = lhs.tensor().format().isAllDense() && (!workspaceAsked || request.cudaTarget);
      if (!request.commands.empty() && (!addIntoOutput || workspaceAsked)) {
        bool onGpu = std::any_of(request.commands.begin(), request.commands.end(), [](const auto& c) {
          const auto* parallelize = std::get_if<ParallelizeCommand>(&c.kind);
          return parallelize && (parallelize->unit == ir::ParallelUnit::GPUBlock ||
                                 parallelize->unit == ir::ParallelUnit::GPUWarp ||
                                 parallelize->unit == ir::ParallelUnit::GPUThread);
        });
        if (onGpu && !addIntoOutput)
          throw LoweringError("the terms of this sum reduce over different variables, so they go through a sparse "
                              "workspace, and sparse workspaces run on the CPU only (target cpu)");
        // sparse_workspace(...) configures the workspace; the other
        // commands schedule the terms' loops once they stand.
        std::vector<ScheduleCommand> workspaceCommands;
        std::vector<size_t> indices;
        for (size_t c = 0; c < request.commands.size(); ++c)
          if (std::holds_alternative<SparseWorkspaceCommand>(request.commands[c].kind)) {
            workspaceCommands.push_back(request.commands[c]);
            indices.push_back(c);
          }
        try {
          applySchedule(nest, workspaceCommands, *assignment, {});
        } catch (const ScheduleError& error) {
          throw ScheduleError(indices.at(error.command()), error.what());
        }
      }
      std::vector<std::string> decisions;
      std::vector<std::pair<std::string, TensorVar>> convertedInputs;
      std::vector<WorkspaceTerm> workspaceTerms;
      // A pos iterates the positions of the access it names, in its own
      // order: the term reads that access, not a copy.
      std::vector<Access> posAccesses;
      for (const auto& command : request.commands)
        if (const auto* pos = std::get_if<ir::PosRelation>(&command.kind)) posAccesses.push_back(pos->access);
      std::vector<IndexExpr> writtenBodies;
      for (auto& term : *terms) {
        writtenBodies.push_back(term.body);
        WorkspaceTerm filled;
        filled.loops = termLoopOrder(lhs, term, decisions, convertedInputs, takenNames, posAccesses);
        filled.value = term.negated ? ir::NegNode::make(term.body) : term.body;
        filled.summed = term.summed;
        workspaceTerms.push_back(filled);
      }
      // A precompute names a part of one term as written; where that term
      // reads an input from a copy in its loops' order, the part reads the
      // copy too (a part in several terms is refused as such, unchanged).
      std::vector<ScheduleCommand> commands = request.commands;
      for (auto& command : commands) {
        auto* precompute = std::get_if<PrecomputeCommand>(&command.kind);
        if (!precompute) continue;
        std::vector<size_t> holders;
        for (size_t t = 0; t < writtenBodies.size(); ++t)
          if (!(ir::replace(writtenBodies[t], {{precompute->expr, IndexExpr(0.0)}}) == writtenBodies[t]))
            holders.push_back(t);
        if (holders.size() == 1 && !(*terms)[holders.front()].readFromCopies.empty())
          precompute->expr = ir::replace(precompute->expr, (*terms)[holders.front()].readFromCopies);
      }
      ConcretizedStatement result;
      nest.takenNames = takenNames;
      const LoopNest unbuilt = nest;
      auto build = [&](bool addInto) {
        result.stmt = addInto ? buildTermwiseAccumulation(nest, lhs, workspaceTerms, request.cudaTarget)
                              : buildTermwiseSparseWorkspace(nest, lhs, workspaceTerms);
        if (!onlyWorkspaceCommands && !request.commands.empty())
          result.stmt = scheduleNestedSums(result.stmt, commands, *assignment, nest.decisions,
                                           nest.takenNames, /*workspaceTaken=*/true, addInto);
      };
      build(addIntoOutput);
      // On CPU threads, iterations of a loop that sums would add into the
      // same entries: a sparse workspace per thread keeps them apart, under
      // any race strategy (on the cuda target such a nest's threads add
      // atomically instead).
      if (addIntoOutput && !request.cudaTarget) {
        if (auto racing = loopSummedOnThreads(result.stmt, lhs)) {
          addIntoOutput = false;
          nest = unbuilt;
          build(false);
          nest.decisions.push_back("not taken: each term adding into " + lhs.tensor().name() + " directly (the loop "
                                   "over " + racing->name() + " runs on threads and sums into " +
                                   lhs.tensor().name() + "'s entries, so its iterations would race; each thread "
                                   "inserts into a sparse workspace of its own instead)");
        }
      }
      result.termsAddIntoOutput = addIntoOutput;
      if (addIntoOutput && workspaceAsked)
        nest.decisions.push_back(nest.sparseWorkspaceText + ": on the cuda target the terms add into " +
                                 lhs.tensor().name() + " (dense) directly, each in a loop nest of its own, a kernel "
                                 "each; no sparse workspace is made" + workspaceOptionsIgnoredOnGpu(nest));
      result.loopOrder = workspaceTerms.front().loops;
      decisions.insert(decisions.end(), nest.decisions.begin(), nest.decisions.end());
      result.decisions = decisions;
      result.sparseWorkspaces = nest.sparseWorkspaceOptions;
      result.convertedInputs = convertedInputs;
      return result;
    }
  }
  if (nestedSum) {
    ConcretizedStatement nested;
    nested.sumsInTemporaries = true;
    nested.decisions = {"a sum nested inside the expression is computed into a scalar temporary (where)"};
    // Inputs stored against the loops around them are read from copies in
    // the loops' order; the schedule's precomputes and the statement the
    // commands name read the copies too.
    const Access& lhs = assignment->lhs;
    IndexExpr reducedRhs = reduced.as<ir::AssignmentNode>()->rhs;
    IndexExpr statementRhs = assignment->rhs;
    std::vector<ScheduleCommand> commands = request.commands;
    std::vector<Access> posAccesses;
    for (const auto& command : commands)
      if (const auto* pos = std::get_if<ir::PosRelation>(&command.kind)) posAccesses.push_back(pos->access);
    std::vector<IndexVar> outer = outputLoopOrder(lhs, rhs);
    while (auto conversion =
               convertOneNestedInput(reducedRhs, outer, takenNames, request.keptInOrder, posAccesses)) {
      std::unordered_map<IndexExpr, IndexExpr> substitution{
          {IndexExpr(conversion->original), IndexExpr(conversion->converted)}};
      reducedRhs = ir::replace(reducedRhs, substitution);
      statementRhs = ir::replace(statementRhs, substitution);
      rhs = ir::replace(rhs, substitution);
      for (auto& command : commands)
        if (auto* precompute = std::get_if<PrecomputeCommand>(&command.kind))
          precompute->expr = ir::replace(precompute->expr, substitution);
      const TensorVar& copy = conversion->converted.tensor();
      nested.convertedInputs.emplace_back(conversion->original.tensor().name(), copy);
      nested.decisions.push_back(ir::toString(conversion->original) + " stores its indices against the order of the "
                                 "loops around it (the output's loops, then each sum's inside the sums enclosing "
                                 "it): it is read from a copy " + copy.name() + " stored " +
                                 copy.format().toString() + ", converted when the kernel runs");
      outer = outputLoopOrder(lhs, rhs);
    }
    IndexStmt converted = ir::AssignmentNode::make(lhs, statementRhs, assignment->accumulate);
    nested.stmt = ir::concretize(converted, outer);
    if (!commands.empty()) {
      nested.stmt = scheduleNestedSums(nested.stmt, commands, *converted.as<ir::AssignmentNode>(), nested.decisions,
                                       takenNames);
    }
    return nested;
  }

  const Access& lhs = assignment->lhs;
  const TensorVar& output = lhs.tensor();
  std::vector<std::string> decisions;
  std::vector<std::pair<std::string, TensorVar>> convertedInputs;
  // A pos iterates the positions of the access it names, in its own order.
  std::vector<Access> posAccesses;
  std::optional<size_t> posCommand;  // the first such pos
  for (size_t c = 0; c < request.commands.size(); ++c)
    if (const auto* pos = std::get_if<ir::PosRelation>(&request.commands[c].kind)) {
      posAccesses.push_back(pos->access);
      if (!posCommand) posCommand = c;
    }
  // A precompute's expression reads the copies too.
  std::vector<ScheduleCommand> commands = request.commands;
  std::unordered_map<IndexExpr, IndexExpr> readAs;
  while (auto conversion = convertOneDisagreeingInput(lhs, rhs, takenNames, request.keptInOrder, posAccesses)) {
    rhs = ir::replace(rhs, {{IndexExpr(conversion->original), IndexExpr(conversion->converted)}});
    readAs.emplace(IndexExpr(conversion->converted), IndexExpr(conversion->original));
    for (auto& command : commands)
      if (auto* precompute = std::get_if<PrecomputeCommand>(&command.kind))
        precompute->expr =
            ir::replace(precompute->expr, {{IndexExpr(conversion->original), IndexExpr(conversion->converted)}});
    const TensorVar& copy = conversion->converted.tensor();
    convertedInputs.emplace_back(conversion->original.tensor().name(), copy);
    decisions.push_back("the sparse inputs' storage orders admit no common loop order: " +
                        ir::toString(conversion->original) + " is read from a copy " + copy.name() + " stored " +
                        copy.format().toString() + ", converted when the kernel runs (chosen without sizes: the "
                        "operand whose order disagrees with the output's, else the last one)");
  }

  // Preference: sparse output order, sparse inputs' orders, then the rest.
  std::vector<IndexVar> preference;
  Edges inputEdges, outputEdges;
  std::map<std::pair<IndexVar, IndexVar>, std::string> edgeOwners;
  if (hasSparseLevel(output)) {
    appendUnique(preference, varsInStorageOrder(lhs));
    addChain(outputEdges, varsInStorageOrder(lhs));
  }
  for (const auto& access : ir::accessesOf(rhs)) {
    if (!hasSparseLevel(access.tensor())) continue;
    appendUnique(preference, varsInStorageOrder(access));
    addChain(inputEdges, varsInStorageOrder(access));
    auto chain = varsInStorageOrder(access);
    for (size_t l = 0; l + 1 < chain.size(); ++l)
      edgeOwners.emplace(std::make_pair(chain[l], chain[l + 1]), tensorInWords(access));
  }
  if (output.order() > 0) appendUnique(preference, varsInStorageOrder(lhs));
  appendUnique(preference, reductionVars);
  appendUnique(preference, ir::indexVarsOf(rhs));

  Edges allEdges = inputEdges;
  allEdges.insert(outputEdges.begin(), outputEdges.end());
  // Preferably an order that appends the output in its storage order; else
  // the inputs' order, the results scattering into a sparse workspace.
  auto order = topologicalOrder(preference, allEdges);
  if (!order) order = topologicalOrder(preference, inputEdges);
  if (!order) {
    std::string reason = "the sparse inputs disagree on the loop order: no order of (" + joinNames(preference) +
                         ") visits every sparse input's levels in storage order";
    // Where only the pos's tensor, kept in its order, stood in the way of a
    // copy, the pos is the cause.
    if (std::set<std::string> names = takenNames; posCommand && convertOneDisagreeingInput(lhs, rhs, names, request.keptInOrder))
      throw ScheduleError(*posCommand, request.commands[*posCommand].text + ": " + reason + " (the positions of " +
                                           std::get<ir::PosRelation>(request.commands[*posCommand].kind)
                                               .access.tensor().name() +
                                           " are iterated in its own order, so it cannot be read from a converted copy)");
    throw LoweringError(reason + "; convert one input to a format whose mode order matches the others");
  }
  LoopNest nest;
  nest.loops = *order;
  nest.readAs = readAs;
  nest.takenNames = takenNames;
  if (request.commands.empty())
    nest.decisions.push_back("loop order: " + joinNames(*order) +
                             " (sparse tensors are iterated in storage order; the output's order is preferred)");
  std::vector<StorageEdge> storageEdges, outputStorageEdges;
  for (const auto& edge : inputEdges) storageEdges.push_back({edge.first, edge.second, edgeOwners.at(edge)});
  for (const auto& edge : outputEdges)
    if (!inputEdges.count(edge)) outputStorageEdges.push_back({edge.first, edge.second, output.name()});
  applySchedule(nest, commands, *assignment, storageEdges);

  if (!nest.sparseWorkspace && nest.precomputes.empty() && threadsCannotAssembleInPlace(nest, lhs)) {
    std::string whyNot;
    if (threadRangesAppendInOrder(nest, lhs, rhs, whyNot)) {
      nest.decisions.push_back(
          output.name() + " (" + output.format().toString() + ") is appended in place by the ranges of " +
          nest.loops[0].name() + " the threads run in (each from its first coordinate, the operands' cursors found by "
          "binary search): a pass counts each range's appends to every level (its loop without stores), a prefix sum over the ranges turns the counts into offsets, the arrays are "
          "allocated exactly, and a second pass appends each range from its offsets (no sparse workspace)");
    } else {
      nest.sparseWorkspace = SparseWorkspaceCommand{};
      nest.decisions.push_back("threads cannot append to " + output.name() + " (" + output.format().toString() +
                               ") in place (" + whyNot + "), so its results go through sparse workspaces (the "
                               "Workspace race strategy)");
    }
  }
  // A sparse output appended out of its storage order scatters.
  auto broken = hasSparseLevel(output) ? brokenEdge(nest, outputStorageEdges) : std::nullopt;
  std::optional<std::string> scatters;
  if (broken)
    scatters = "the loops visit " + broken->below.name() + " outside " + broken->above.name() + ", but " +
               output.name() + " stores " + broken->above.name() + " above " + broken->below.name();
  else if (hasSparseLevel(output) && nest.precomputes.empty() && !nest.sparseWorkspace &&
           !insertGustavsonWorkspace(nest, lhs, rhs))
    scatters = "a summed variable sits above more than one of " + output.name() + "'s levels";
  bool workspaceStrategy = std::any_of(nest.attributes.begin(), nest.attributes.end(), [](const auto& entry) {
    return entry.second.onThreads() && entry.second.outputRaceStrategy == ir::OutputRaceStrategy::Workspace;
  });
  if (workspaceStrategy && !scatters && !nest.sparseWorkspace && output.order() > 0) nest.sparseWorkspace = SparseWorkspaceCommand{};
  if (workspaceStrategy && output.order() == 0)
    throw LoweringError("the Workspace race strategy needs an output with indices; a scalar is reduced by "
                        "ParallelReduction");
  if (request.cudaTarget && !scatters) takeWorkspaceIntoDenseOutputOnGpu(nest, lhs);
  IndexStmt concrete = scatters || nest.sparseWorkspace
                         ? buildSparseWorkspaceNest(nest, lhs, rhs, scatters)
                         : buildConcreteNest(nest, lhs, rhs, !reductionVars.empty());
  if (!request.commands.empty()) nest.decisions.push_back("loop order after the schedule: " + joinNames(nest.loops));
  describeThreadLoops(nest, lhs);
  decisions.insert(decisions.end(), nest.decisions.begin(), nest.decisions.end());
  ConcretizedStatement result;
  // The user's precompute keeps out the workspace that would take the
  // output's coordinates out of order; the lowering checks the order.
  if (hasSparseLevel(output) && !scatters && !nest.sparseWorkspace && !nest.precomputes.empty() &&
      nest.precomputes.front().commandIndex && !trailingOutputVars(nest, lhs).vars.empty())
    result.outputOrderCommand = nest.precomputes.front().commandIndex;
  result.stmt = concrete;
  result.loopOrder = nest.loops;
  result.decisions = decisions;
  result.sparseWorkspaces = nest.sparseWorkspaceOptions;
  result.convertedInputs = convertedInputs;
  return result;
}

}  // namespace tcc::lowering
