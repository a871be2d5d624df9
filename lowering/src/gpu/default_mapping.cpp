#include "tcc/lowering/gpu_default_mapping.h"

#include <algorithm>
#include <set>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/lowering/gpu_spmm_mappings.h"
#include "tcc/lowering/lower.h"
#include "../access_occurrences.h"
#include "gpu_input_rules.h"

namespace tcc::lowering {

namespace {

// Columns of the dense operand one warp takes (2 per lane): on the H100,
// tiles of 64 beat tiles of 128 where a few long rows hold the time (more
// warps share a row's columns) and lose little elsewhere. A CSR SpMM with
// no schedule also gets tiles of 32 and 128, picked per input
// (gpu_spmm_mappings.h).
constexpr int kColumnTile = 64;

ScheduleCommand parallelize(const ir::IndexVar& var, ir::ParallelUnit unit, ir::OutputRaceStrategy strategy) {
  std::string text = "parallelize(" + var.name() + ", " + ir::toString(unit) + ", " + ir::toString(strategy) + ")";
  return {ParallelizeCommand{var, unit, strategy}, text};
}

bool contains(const std::vector<ir::IndexVar>& vars, const ir::IndexVar& var) {
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}


// A product of accesses, literals and negations (a sum's terms would need
// their own iteration spaces).
bool isProduct(const ir::IndexExpr& expr) {
  switch (expr.kind()) {
    case ir::IndexExprKind::Access: case ir::IndexExprKind::Literal: return true;
    case ir::IndexExprKind::Neg: return isProduct(expr.as<ir::NegNode>()->operand);
    case ir::IndexExprKind::Mul: {
      const auto* mul = expr.as<ir::MulNode>();
      return isProduct(mul->a) && isProduct(mul->b);
    }
    default: return false;
  }
}

ScheduleCommand command(ScheduleCommandKind kind, std::string text) { return {std::move(kind), std::move(text)}; }

ScheduleCommand reorder(const std::vector<ir::IndexVar>& order) {
  std::string text = "reorder(";
  for (size_t k = 0; k < order.size(); ++k) text += (k ? ", " : "") + order[k].name();
  return {ReorderCommand{order}, text + ")"};
}

ScheduleCommand split(const ir::IndexVar& parent, const ir::IndexVar& outer, const ir::IndexVar& inner, int64_t factor) {
  return {ir::SplitRelation{parent, outer, inner, factor}, "split(" + parent.name() + ", " + outer.name() + ", " +
                                                               inner.name() + ", " + std::to_string(factor) + ")"};
}

ScheduleCommand divide(const ir::IndexVar& parent, const ir::IndexVar& outer, const ir::IndexVar& inner, int64_t parts) {
  return {ir::DivideRelation{parent, outer, inner, parts}, "divide(" + parent.name() + ", " + outer.name() + ", " +
                                                               inner.name() + ", " + std::to_string(parts) + ")"};
}

// An index of the output that can be the outermost loop: every input with
// a sparse level that it indexes stores it in its first level (dense
// inputs are located in any order).
std::optional<ir::IndexVar> outputIndexToHoist(const ir::AssignmentNode& node,
                                                const std::vector<ir::IndexVar>& loopOrder) {
  const std::vector<ir::IndexVar>& outputVars = node.lhs.indices();
  auto accesses = ir::accessesOf(node.rhs);
  for (const auto& var : loopOrder) {
    if (!contains(outputVars, var)) continue;
    bool first = std::all_of(accesses.begin(), accesses.end(), [&](const ir::Access& access) {
      const ir::Format& format = access.tensor().format();
      if (format.isAllDense() || !contains(access.indices(), var)) return true;
      for (int level = 1; level < format.order(); ++level)
        if (access.indices()[format.modeOfLevel(level)] == var) return false;
      return true;
    });
    if (first) return var;
  }
  return std::nullopt;
}

// The inputs whose sparse levels `var` iterates.
std::vector<ir::Access> sparseLevelsOf(const ir::AssignmentNode& node, const ir::IndexVar& var) {
  std::vector<ir::Access> found;
  for (const auto& access : ir::accessesOf(node.rhs)) {
    const ir::Format& format = access.tensor().format();
    for (int level = 0; level < format.order(); ++level)
      if (!format.level(level).isDense() && access.indices()[format.modeOfLevel(level)] == var) found.push_back(access);
  }
  return found;
}

// The variable a split or divide of `var` cuts: `var` itself where it
// iterates no sparse level, or its positions in the one input whose sparse
// level it iterates in a product (pos appended to `commands`); nothing
// where several sparse operands or a sum's terms meet over it (a split of
// their coordinates would search them, a pos over one leave the others to
// a kernel of atomic additions).
std::optional<ir::IndexVar> cutOf(const ir::AssignmentNode& node, const ir::IndexVar& var,
                                  std::vector<ScheduleCommand>& commands) {
  std::vector<ir::Access> levels = sparseLevelsOf(node, var);
  if (levels.empty()) return var;
  if (levels.size() > 1 || !isScaledProduct(node.rhs)) return std::nullopt;
  const ir::Access& level = levels.front();
  ir::IndexVar positions(var.name() + "_pos");
  std::string access = level.tensor().name() + "(";
  for (size_t k = 0; k < level.indices().size(); ++k) access += (k ? ", " : "") + level.indices()[k].name();
  commands.push_back(command(ir::PosRelation{var, positions, level},
                             "pos(" + var.name() + ", " + positions.name() + ", " + access + "))"));
  return positions;
}

// The outermost loop, `sum`, adds into the dense output and no index of the
// output can come outward: GPU threads add into the output with atomic
// additions. Where the sum's order must not change from run to run (fp
// strict, floating point), one GPU block sums a scalar (a fixed tree of
// its threads' parts, one atomic addition) and one GPU thread sums into
// other outputs, in loop order; where neither can be cut out of the loop
// (its sparse operands meet in a sum), the statement is refused.
std::vector<ScheduleCommand> mappingOfSummedOuterLoop(const ir::AssignmentNode& node,
                                                      const std::vector<ir::IndexVar>& loopOrder,
                                                      const GpuMappingOptions& options,
                                                      std::vector<std::string>& reasons) {
  const ir::IndexVar& sum = loopOrder[0];
  const ir::TensorVar& output = node.lhs.tensor();
  const bool scalar = node.lhs.indices().empty();
  const bool oneOrder = options.sumsInOneOrder && ir::isFloat(output.datatype());
  const std::string why = "fp strict: atomic additions from many threads would come in another order each run; fp "
                          "fast spreads the sum over the GPU";
  const auto atomics = ir::OutputRaceStrategy::Atomics;
  std::vector<ScheduleCommand> commands;
  std::optional<ir::IndexVar> cut;
  if (oneOrder || (scalar && options.splitSums)) cut = cutOf(node, sum, commands);
  if (oneOrder && !cut)
    throw LoweringError("the default GPU mapping: " + sum.name() + " is summed into " + output.name() + ", and its "
                        "loop co-iterates several sparse operands (or the terms of a sum, or a builtin evaluated off a "
                        "sparse operand's entries), which no divide cuts into "
                        "one GPU " + (scalar ? "block" : "thread") + "; " + why + " (or map the loops with "
                        "parallelize(" + sum.name() + ", GPUThread, Atomics))");
  std::vector<ir::IndexVar> rest(loopOrder.begin() + 1, loopOrder.end());
  if (scalar && cut) {
    // A block's threads take consecutive iterations (coalesced loads),
    // each summing several in registers; the block adds its threads'
    // parts with shuffles and shared memory.
    ir::IndexVar block(sum.name() + "_block"), in(sum.name() + "_in"), round(sum.name() + "_round"),
        thread(sum.name() + "_thread");
    std::vector<ir::IndexVar> order{block, thread, round};
    order.insert(order.end(), rest.begin(), rest.end());
    const int threads = oneOrder ? kOneBlockThreads : kSumBlockThreads;
    commands.insert(commands.end(),
                    {oneOrder ? divide(*cut, block, in, 1) : split(*cut, block, in, kSumBlockShare),
                     split(in, round, thread, threads), reorder(order),
                     parallelize(block, ir::ParallelUnit::GPUBlock, atomics),
                     parallelize(thread, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::ParallelReduction)});
    if (oneOrder)
      reasons.push_back("default GPU mapping: " + sum.name() + " is summed into the scalar " + output.name() +
                        " by one GPU block (divide into 1 part), its " + std::to_string(threads) +
                        " threads over consecutive iterations, their parts added across the block in the same order "
                        "every run and added to " + output.name() + " once (" + why + ")");
    else
      reasons.push_back("default GPU mapping: " + sum.name() + " is summed into the scalar " + output.name() +
                        ": a GPU block per " + std::to_string(kSumBlockShare) + " iterations, its " +
                        std::to_string(threads) + " threads over consecutive ones, " +
                        std::to_string(kSumBlockShare / threads) + " each; the threads' parts added across the block "
                        "(shuffles, then shared memory), each block's total added to " + output.name() +
                        " with one atomic addition");
    return commands;
  }
  const std::string storageOrder =
      scalar ? "no split cuts it into blocks"
             : "no index of " + output.name() + " can be the outermost loop: the sparse inputs are iterated in "
               "storage order";
  if (!oneOrder) {
    reasons.push_back("default GPU mapping: one thread per iteration of " + sum.name() + ", which is summed into " +
                      output.name() + " (" + storageOrder + "); threads add into " + output.name() +
                      " with atomic additions");
    return {parallelize(sum, ir::ParallelUnit::GPUThread, atomics)};
  }
  ir::IndexVar thread(sum.name() + "_thread"), in(sum.name() + "_in");
  commands.push_back(divide(*cut, thread, in, 1));
  commands.push_back(parallelize(thread, ir::ParallelUnit::GPUThread, atomics));
  reasons.push_back("default GPU mapping: " + sum.name() + " is summed into " + output.name() + " (" + storageOrder +
                    "): one GPU thread runs the loops in order (divide into 1 part; " + why + ")");
  return commands;
}

}  // namespace

bool parallelizesLoops(const ScheduleRequest& request) {
  return std::any_of(request.commands.begin(), request.commands.end(), [](const ScheduleCommand& command) {
    return std::holds_alternative<ParallelizeCommand>(command.kind);
  });
}

std::vector<ScheduleCommand> defaultGpuMapping(const ir::IndexStmt& assignment,
                                               const std::vector<ir::IndexVar>& loopOrder,
                                               std::vector<std::string>& reasons, const GpuMappingOptions& options) {
  std::vector<ScheduleCommand> commands;
  if (loopOrder.empty()) return commands;
  const auto* node = assignment.as<ir::AssignmentNode>();
  if (!node) return commands;
  const std::vector<ir::IndexVar>& outputVars = node->lhs.indices();
  // The outermost loop sums into a dense output: an index of the output
  // outward where the sparse inputs' storage orders allow it (each
  // iteration then writes entries of its own), else a reduction.
  auto origins = ir::originVars(loopOrder[0], options.relations);
  const bool outerSums = std::any_of(origins.begin(), origins.end(),
                                     [&](const ir::IndexVar& var) { return !contains(outputVars, var); });
  if (node->lhs.tensor().format().isAllDense() && outerSums) {
    std::optional<ir::IndexVar> hoisted = outputIndexToHoist(*node, loopOrder);
    if (!hoisted) return mappingOfSummedOuterLoop(*node, loopOrder, options, reasons);
    std::vector<ir::IndexVar> order{*hoisted};
    for (const auto& var : loopOrder)
      if (!(var == *hoisted)) order.push_back(var);
    reasons.push_back("default GPU mapping: " + loopOrder[0].name() + " is summed into " + node->lhs.tensor().name() +
                      ", so " + hoisted->name() + ", an index of it, becomes the outermost loop (" +
                      reorder(order).text + ")");
    commands = defaultGpuMapping(assignment, order, reasons, options);
    commands.insert(commands.begin(), reorder(order));
    return commands;
  }

  // Variables that index a sparse level of an input, and those that index
  // a sparse input at all.
  std::set<ir::IndexVar> sparseLevelVars, sparseTensorVars;
  for (const auto& access : ir::accessesOf(node->rhs)) {
    const ir::Format& format = access.tensor().format();
    if (format.isAllDense()) continue;
    for (int level = 0; level < format.order(); ++level) {
      const ir::IndexVar& var = access.indices()[format.modeOfLevel(level)];
      sparseTensorVars.insert(var);
      if (!format.level(level).isDense()) sparseLevelVars.insert(var);
    }
  }
  const ir::IndexVar& rows = loopOrder[0];
  // A sparse output's rows are each assembled by one GPU thread (counted,
  // then filled at their offsets): nothing inside a row is parallel.
  if (!node->lhs.tensor().format().isAllDense()) {
    commands.push_back(parallelize(rows, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::NoRaces));
    reasons.push_back("default GPU mapping: one thread per row " + rows.name() + " of the sparse output " +
                      node->lhs.tensor().name());
    return commands;
  }
  // A GPU loop inside a where would fill a workspace each GPU thread keeps
  // a copy of (dense_workspace(j) below i): the rows' threads alone.
  std::set<ir::IndexVar> loopsInWheres;
  std::vector<const ir::WhereNode*> wheres;
  if (options.concrete.defined()) wheres = whereStatements(options.concrete);
  for (const auto* where : wheres)
    for (const auto& side : {where->consumer, where->producer})
      for (const auto* loop : statementsOf<ir::ForallNode>(side)) loopsInWheres.insert(loop->indexVar);
  bool rowLike = std::any_of(loopOrder.begin() + 1, loopOrder.end(),
                             [&](const ir::IndexVar& var) { return sparseLevelVars.count(var) > 0; }) &&
                 std::none_of(loopOrder.begin() + 1, loopOrder.end(),
                              [&](const ir::IndexVar& var) { return loopsInWheres.count(var) > 0; });
  if (!rowLike) {
    commands.push_back(parallelize(rows, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::NoRaces));
    reasons.push_back("default GPU mapping: one thread per iteration of " + rows.name());
    return commands;
  }
  commands.push_back(parallelize(rows, ir::ParallelUnit::GPUWarp, ir::OutputRaceStrategy::NoRaces));
  auto denseColumn = std::find_if(loopOrder.begin() + 1, loopOrder.end(), [&](const ir::IndexVar& var) {
    return !sparseTensorVars.count(var) && contains(outputVars, var);
  });
  if (denseColumn != loopOrder.end() && sparseLevelVars.count(rows)) {
    // The rows are a compressed level's coordinates (a CSF slice, a DCSR
    // row), which a fuse cannot cut into ranges: a warp per row, its lanes
    // over the dense columns, each walking the whole row.
    const ir::IndexVar& column = *denseColumn;
    std::vector<ir::IndexVar> order{rows, column};
    for (auto it = loopOrder.begin() + 1; it != loopOrder.end(); ++it)
      if (!(*it == column)) order.push_back(*it);
    std::string text = "reorder(";
    for (size_t k = 0; k < order.size(); ++k) text += (k ? ", " : "") + order[k].name();
    commands.insert(commands.begin(), {ReorderCommand{order}, text + ")"});
    commands.push_back(parallelize(column, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::NoRaces));
    reasons.push_back("default GPU mapping: one warp per row " + rows.name() +
                      " (a compressed level's), its lanes over the dense " + column.name() +
                      ", each walking the whole row");
    return commands;
  }
  if (denseColumn != loopOrder.end()) {
    // Columns in tiles of kColumnTile; a warp per (row, tile); lane l of
    // the warp owns columns l and l + 32 of its tile and sums them together
    // in one walk over the row's nonzeros (unroll and jam).
    return columnTileMapping(rows, *denseColumn, loopOrder, sparseLevelVars, kColumnTile, reasons);
  }
  const ir::IndexVar& inner = loopOrder[1];
  bool summed = !contains(outputVars, inner);
  if (summed && outputVars != std::vector<ir::IndexVar>{rows}) {
    // The lanes' partial sums would go to one entry per row; the row
    // writes several (its other indices are inside).
    commands.back() = parallelize(rows, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::NoRaces);
    reasons.push_back("default GPU mapping: one thread per iteration of " + rows.name() + " (the loop below it, " +
                      inner.name() + ", sums into entries that loops further in pick)");
    return commands;
  }
  commands.push_back(parallelize(inner, ir::ParallelUnit::GPUThread,
                                 summed ? ir::OutputRaceStrategy::ParallelReduction : ir::OutputRaceStrategy::NoRaces));
  reasons.push_back("default GPU mapping: one warp per row " + rows.name() + ", its lanes over " + inner.name() +
                    (summed ? " (partial sums added with warp shuffles)" : ""));
  return commands;
}

std::vector<ScheduleCommand> defaultGpuMappingOfNestedSums(const ir::IndexStmt& assignment,
                                                           const ir::IndexStmt& concrete,
                                                           std::vector<std::string>& reasons,
                                                           const GpuMappingOptions& options) {
  std::vector<ScheduleCommand> commands;
  const auto* node = assignment.as<ir::AssignmentNode>();
  if (!node) return commands;
  const std::vector<ir::IndexVar>& outputVars = node->lhs.indices();
  // The loops around the wheres (a schedule's split, fuse or pos may have
  // made them), then the first loop of each sum.
  std::vector<ir::ProvenanceRelation> relations;
  ir::IndexStmt body = concrete;
  if (const auto* scheduled = body.as<ir::SuchThatNode>()) {
    relations = scheduled->relations;
    body = scheduled->stmt;
  }
  std::vector<ir::IndexVar> outer;
  while (const auto* forall = body.as<ir::ForallNode>()) {
    outer.push_back(forall->indexVar);
    body = forall->body;
  }
  // Each iteration of the outermost loop writes entries of its own.
  auto writesOwnEntries = [&](const ir::IndexVar& var) {
    auto origins = ir::originVars(var, relations);
    return std::all_of(origins.begin(), origins.end(), [&](const ir::IndexVar& v) { return contains(outputVars, v); });
  };
  if (outer.empty())
    throw LoweringError("the default GPU mapping: the sums nested in `" + ir::toString(node->rhs) + "` go to scalar "
                        "temporaries outside every loop, on the host, where no GPU thread can add to them; compute "
                        "each such sum in a statement of its own (into a scalar tensor), then combine them");
  // A loop around the wheres that sums: the temporaries are each
  // thread's, the output's entries added into as an outer sum's are.
  if (!writesOwnEntries(outer[0])) {
    GpuMappingOptions unsplit = options;
    unsplit.splitSums = false;
    return mappingOfSummedOuterLoop(*node, outer, unsplit, reasons);
  }
  std::vector<ir::IndexVar> sumHeads, innerLoops;
  for (const auto* where : whereStatements(body)) {
    const auto* head = where->producer.as<ir::ForallNode>();
    if (!head) continue;
    if (!contains(sumHeads, head->indexVar)) sumHeads.push_back(head->indexVar);
    for (const auto* inner : statementsOf<ir::ForallNode>(head->body)) innerLoops.push_back(inner->indexVar);
  }
  std::set<ir::IndexVar> sparseLevelVars;
  for (const auto& access : ir::accessesOf(node->rhs)) {
    const ir::Format& format = access.tensor().format();
    for (int level = 0; level < format.order(); ++level)
      if (!format.level(level).isDense()) sparseLevelVars.insert(access.indices()[format.modeOfLevel(level)]);
  }
  const ir::IndexVar& rows = outer[0];
  // A warp's lanes over a sum's first loop, which no other sum runs below
  // its own first loop (GPU units nest once).
  // (A precompute's workspace filled below the rows is each thread's: no
  // lanes inside its where.)
  auto wheres = whereStatements(body);
  const bool scalarTemporariesAlone = std::all_of(wheres.begin(), wheres.end(), [](const ir::WhereNode* where) {
    auto written = ir::tensorsWritten(where->producer);
    return std::all_of(written.begin(), written.end(), [](const ir::TensorVar& tensor) { return tensor.order() == 0; });
  });
  bool rowLike = outer.size() == 1 && !sumHeads.empty() && scalarTemporariesAlone &&
                 std::none_of(sumHeads.begin(), sumHeads.end(),
                              [&](const ir::IndexVar& var) { return contains(innerLoops, var) || var == rows; }) &&
                 std::any_of(sumHeads.begin(), sumHeads.end(),
                             [&](const ir::IndexVar& var) { return sparseLevelVars.count(var) > 0; });
  if (!rowLike) {
    commands.push_back(parallelize(rows, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::NoRaces));
    reasons.push_back("default GPU mapping: one thread per iteration of " + rows.name() +
                      ", the sums nested in the expression in its registers");
    return commands;
  }
  commands.push_back(parallelize(rows, ir::ParallelUnit::GPUWarp, ir::OutputRaceStrategy::NoRaces));
  std::string lanes;
  for (const auto& var : sumHeads) {
    commands.push_back(parallelize(var, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::ParallelReduction));
    lanes += (lanes.empty() ? "" : ", ") + var.name();
  }
  reasons.push_back("default GPU mapping: one warp per row " + rows.name() + ", the sums nested in the expression in "
                    "its registers, its lanes over each sum's loop (" + lanes + "; partial sums added with warp "
                    "shuffles)");
  return commands;
}

namespace {

// Each fill's outermost loop, where no loop holds the where and that
// loop's variable indexes every entry the fill writes, over GPU threads.
class WorkspaceFillMapper {
 public:
  explicit WorkspaceFillMapper(std::vector<std::string>& reasons) : reasons_(reasons) {}

  // Through the statement's top: wheres no loop holds.
  ir::IndexStmt top(const ir::IndexStmt& stmt) {
    if (const auto* scheduled = stmt.as<ir::SuchThatNode>())
      return ir::SuchThatNode::make(top(scheduled->stmt), scheduled->relations);
    if (const auto* sequence = stmt.as<ir::SequenceNode>())
      return ir::SequenceNode::make(top(sequence->definition), top(sequence->mutation));
    if (const auto* where = stmt.as<ir::WhereNode>())
      return ir::WhereNode::make(top(where->consumer), fill(where->producer));
    return stmt;
  }

 private:
  ir::IndexStmt fill(const ir::IndexStmt& producer) {
    const auto* loop = producer.as<ir::ForallNode>();
    if (!loop) return top(producer);
    if (loop->attributes.parallelUnit != ir::ParallelUnit::NotParallel) return producer;
    auto assignments = statementsOf<ir::AssignmentNode>(producer);
    bool ownEntries = !assignments.empty() && std::all_of(assignments.begin(), assignments.end(), [&](const auto* a) {
      return a->lhs.tensor().order() > 0 && contains(a->lhs.indices(), loop->indexVar);
    });
    // Several sparse operands over the loop's variable are co-iterated by
    // a while loop, which GPU threads cannot split.
    size_t sparseOperands = 0;
    for (const auto* assignment : assignments)
      for (const auto& access : ir::accessesOf(assignment->rhs))
        if (!access.tensor().format().isAllDense() && contains(access.indices(), loop->indexVar)) ++sparseOperands;
    if (!ownEntries || sparseOperands > 1) return producer;
    ir::ForallAttributes attributes = loop->attributes;
    attributes.parallelUnit = ir::ParallelUnit::GPUThread;
    attributes.outputRaceStrategy = ir::OutputRaceStrategy::NoRaces;
    reasons_.push_back("workspace " + assignments.front()->lhs.tensor().name() +
                       " (its where outside the GPU loops: one copy in device memory) filled by a kernel of its "
                       "own, one thread per iteration of " + loop->indexVar.name());
    return ir::ForallNode::make(loop->indexVar, loop->body, attributes);
  }

  std::vector<std::string>& reasons_;
};

}  // namespace

ir::IndexStmt mapWorkspaceFillsToGpuThreads(const ir::IndexStmt& concrete, std::vector<std::string>& reasons) {
  return WorkspaceFillMapper(reasons).top(concrete);
}

namespace {

// Each term's nest over GPU threads (mapTermNestsToGpuThreads); a summed
// nest into a floating-point output under fp strict by one thread, its
// outermost variable divided into one part (`relations` gets the divide).
class TermNestMapper {
 public:
  TermNestMapper(std::vector<std::string>& reasons, bool sumsInOneOrder, std::vector<ir::ProvenanceRelation>& relations)
      : reasons_(reasons), sumsInOneOrder_(sumsInOneOrder), relations_(relations) {}

  ir::IndexStmt map(const ir::IndexStmt& concrete) {
    if (const auto* sequence = concrete.as<ir::SequenceNode>()) {
      ir::IndexStmt first = map(sequence->definition);  // (explain's lines in order)
      return ir::SequenceNode::make(first, map(sequence->mutation));
    }
    const auto* loop = concrete.as<ir::ForallNode>();
    if (!loop || loop->attributes.parallelUnit != ir::ParallelUnit::NotParallel) return concrete;
    auto assignments = statementsOf<ir::AssignmentNode>(concrete);
    bool ownEntries = std::all_of(assignments.begin(), assignments.end(), [&](const auto* assignment) {
      return contains(assignment->lhs.indices(), loop->indexVar);
    });
    // (A workspace a where inside the nest fills is each thread's: its
    // entries do not race.)
    std::set<ir::TensorVar> workspaces;
    for (const auto* where : whereStatements(concrete))
      for (const auto& tensor : ir::tensorsWritten(where->producer)) workspaces.insert(tensor);
    bool sumsIntoFloats = std::any_of(assignments.begin(), assignments.end(), [&](const auto* assignment) {
      return !workspaces.count(assignment->lhs.tensor()) && ir::isFloat(assignment->lhs.tensor().datatype()) &&
             !contains(assignment->lhs.indices(), loop->indexVar);
    });
    ir::ForallAttributes attributes = loop->attributes;
    attributes.parallelUnit = ir::ParallelUnit::GPUThread;
    attributes.outputRaceStrategy = ownEntries ? ir::OutputRaceStrategy::NoRaces : ir::OutputRaceStrategy::Atomics;
    std::string term = assignments.empty() ? std::string("a term") : ir::toString(assignments.front()->rhs);
    if (sumsIntoFloats && sumsInOneOrder_) return inOneThread(concrete, attributes, term);
    reasons_.push_back("default GPU mapping: the nest of " + term + " a kernel of its own, one thread per iteration of " +
                       loop->indexVar.name() +
                       (ownEntries ? "" : " (summed: threads add into the output with atomic additions)"));
    return ir::ForallNode::make(loop->indexVar, loop->body, attributes);
  }

 private:
  // divide(v, v_thread, v_in, 1): one GPU thread runs the nest in loop
  // order. Where v iterates a sparse level (a divide would search its
  // coordinates) or comes from a schedule's relation, refused.
  ir::IndexStmt inOneThread(const ir::IndexStmt& nest, const ir::ForallAttributes& attributes,
                            const std::string& term) {
    const ir::ForallNode& loop = *nest.as<ir::ForallNode>();
    const ir::IndexVar& var = loop.indexVar;
    const std::string why = "fp strict: atomic additions from many GPU threads would come in another order each "
                            "run; fp fast maps a thread per iteration of " + var.name();
    auto origins = ir::originVars(var, relations_);
    bool derived = origins.size() != 1 || !origins.count(var);
    bool sparse = false;
    for (const auto& access : ir::accessesOf(nest))
      for (int level = 0; level < access.tensor().format().order(); ++level)
        if (!access.tensor().format().level(level).isDense() &&
            access.indices()[access.tensor().format().modeOfLevel(level)] == var)
          sparse = true;
    if (derived || sparse)
      throw LoweringError("the default GPU mapping: the nest of " + term + " sums over " + var.name() +
                          " into its output, and " + var.name() +
                          (sparse ? " iterates a sparse level, which no divide cuts into one GPU thread"
                                  : " comes from a schedule's relation") +
                          "; " + why + " (or map it with parallelize(" + var.name() + ", GPUThread, Atomics))");
    ir::IndexVar thread(var.name() + "_thread"), in(var.name() + "_in");
    relations_.push_back(ir::DivideRelation{var, thread, in, 1});
    reasons_.push_back("default GPU mapping: the nest of " + term + " a kernel of its own, summed over " + var.name() +
                       " into the output: one GPU thread runs its loops in order (divide(" + var.name() + ", " +
                       thread.name() + ", " + in.name() + ", 1); " + why + ")");
    return ir::ForallNode::make(thread, ir::ForallNode::make(in, loop.body), attributes);
  }

  std::vector<std::string>& reasons_;
  bool sumsInOneOrder_;
  std::vector<ir::ProvenanceRelation>& relations_;
};

}  // namespace

ir::IndexStmt mapTermNestsToGpuThreads(const ir::IndexStmt& concrete, std::vector<std::string>& reasons,
                                       bool sumsInOneOrder) {
  const auto* scheduled = concrete.as<ir::SuchThatNode>();
  std::vector<ir::ProvenanceRelation> relations;
  if (scheduled) relations = scheduled->relations;
  ir::IndexStmt mapped = TermNestMapper(reasons, sumsInOneOrder, relations).map(scheduled ? scheduled->stmt : concrete);
  return relations.empty() ? mapped : ir::SuchThatNode::make(mapped, relations);
}

std::optional<BalancedGpuMapping> nonzeroSplitGpuMapping(const ir::IndexStmt& assignment,
                                                         const std::vector<ir::IndexVar>& loopOrder, int share,
                                                         std::vector<std::string>& reasons) {
  const auto* node = assignment.as<ir::AssignmentNode>();
  // SpMV (two loops) keeps its warp per row: a warp's 32 lanes already
  // share a long row, and the nonzero split (spmv_nnz.tc) lost to it on
  // every matrix measured on the H100, the one-long-row adder_dcop_05
  // (0.58x against 1.33x cuSPARSE) and the R-MAT graph (0.16x against
  // 0.52x) included.
  if (!node || loopOrder.size() != 3 || !isProduct(node->rhs)) return std::nullopt;
  // One CSR input A(i, j) with i the outermost loop; every other operand dense.
  std::optional<ir::Access> matrix;
  for (const auto& access : ir::accessesOf(node->rhs)) {
    const ir::Format& format = access.tensor().format();
    if (format.isAllDense()) continue;
    if (matrix || !(format == ir::Format::csr())) return std::nullopt;
    matrix = access;
  }
  if (!matrix || !node->lhs.tensor().format().isAllDense()) return std::nullopt;
  const ir::IndexVar& i = matrix->indices()[0];
  const ir::IndexVar& j = matrix->indices()[1];
  if (!(loopOrder[0] == i) || i == j || !contains(loopOrder, j)) return std::nullopt;
  const std::vector<ir::IndexVar>& outputVars = node->lhs.indices();
  BalancedGpuMapping mapping;
  mapping.matrix = matrix->tensor().name();
  std::string a = mapping.matrix + "(" + i.name() + ", " + j.name() + ")";
  const std::string n = i.name() + j.name();
  ir::IndexVar f(n), fpos(n + "_pos");
  // SpMM: C(i, k) = A(i, j) * B(j, k), k indexing only dense operands.
  const ir::IndexVar* column = nullptr;
  for (const auto& var : loopOrder)
    if (!(var == i) && !(var == j)) column = &var;
  if (outputVars != std::vector<ir::IndexVar>{i, *column}) return std::nullopt;
  const ir::IndexVar& k = *column;
  ir::IndexVar warp(n + "_warp"), in(n + "_in"), tile(k.name() + "_tile"), lane(k.name() + "_lane"),
      fused(n + k.name() + "_warp");
  mapping.commands = {
      command(ReorderCommand{{i, j, k}}, "reorder(" + i.name() + ", " + j.name() + ", " + k.name() + ")"),
      command(ir::FuseRelation{i, j, f}, "fuse(" + i.name() + ", " + j.name() + ", " + n + ")"),
      command(ir::PosRelation{f, fpos, *matrix}, "pos(" + n + ", " + fpos.name() + ", " + a + ")"),
      command(ir::SplitRelation{fpos, warp, in, share},
              "split(" + fpos.name() + ", " + warp.name() + ", " + in.name() + ", " + std::to_string(share) + ")"),
      command(ir::SplitRelation{k, tile, lane, 32}, "split(" + k.name() + ", " + tile.name() + ", " + lane.name() + ", 32)"),
      command(ReorderCommand{{warp, tile, lane, in}},
              "reorder(" + warp.name() + ", " + tile.name() + ", " + lane.name() + ", " + in.name() + ")"),
      command(ir::FuseRelation{warp, tile, fused}, "fuse(" + warp.name() + ", " + tile.name() + ", " + fused.name() + ")"),
      parallelize(fused, ir::ParallelUnit::GPUWarp, ir::OutputRaceStrategy::Atomics),
      parallelize(lane, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::Atomics),
      command(UnrollCommand{in, 4}, "unroll(" + in.name() + ", 4)")};
  reasons.push_back("nonzero-split GPU mapping: " + mapping.matrix + "'s nonzeros in shares of " +
                    std::to_string(share) + ", a warp per (share, tile of 32 " + k.name() +
                    "), a column per lane, whatever rows they belong to; a lane adds its sum for a row to the " +
                    "output with one atomic addition");
  return mapping;
}

std::optional<BalancedGpuMapping> laneSlicedGpuMapping(const ir::IndexStmt& assignment,
                                                       const std::vector<ir::IndexVar>& loopOrder,
                                                       std::vector<std::string>& reasons) {
  const auto* node = assignment.as<ir::AssignmentNode>();
  if (!node || loopOrder.size() != 2 || !(node->lhs.tensor().format() == ir::Format::csr())) return std::nullopt;
  const std::vector<ir::IndexVar>& outputVars = node->lhs.indices();
  if (loopOrder != outputVars) return std::nullopt;
  std::optional<ir::Access> matrix;
  for (const auto& access : ir::accessesOf(node->rhs))
    if (!matrix && access.tensor().format() == ir::Format::csr() && access.indices() == outputVars) matrix = access;
  if (!matrix) return std::nullopt;
  BalancedGpuMapping mapping;
  mapping.matrix = matrix->tensor().name();
  mapping.commands = {parallelize(outputVars[0], ir::ParallelUnit::GPUWarp, ir::OutputRaceStrategy::NoRaces),
                      parallelize(outputVars[1], ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::NoRaces)};
  reasons.push_back("default GPU mapping, long rows: a warp per row " + outputVars[0].name() + " of the sparse output " +
                    node->lhs.tensor().name() + ", the row's " + outputVars[1].name() +
                    " cut in 32 slices, one a lane, each from a 32nd of the way through the operand storing the "
                    "most of the row (each found by binary search, merged, counted, then filled from the lane's "
                    "offset)");
  return mapping;
}

rules::Condition balancedRowClause() {
  using namespace rules;
  static const Condition skewed =
      clause("split_nonzeros", longestRow >= kBalancedLongestRow && longestRow * rows >= kBalancedSkew * nonzeros);
  return skewed;
}

bool isScaledProduct(const ir::IndexExpr& expr) {
  if (const auto* div = expr.as<ir::DivNode>()) return isScaledProduct(div->a) && ir::accessesOf(div->b).empty();
  if (const auto* neg = expr.as<ir::NegNode>()) return isScaledProduct(neg->operand);
  if (const auto* mul = expr.as<ir::MulNode>()) return isScaledProduct(mul->a) && isScaledProduct(mul->b);
  return isProduct(expr);
}

bool balancedRowRule(int64_t longestRow, int64_t rows, int64_t nonzeros) {
  return rules::Rule::holds(balancedRowClause(), {rows, nonzeros, longestRow, 0});
}

namespace {

// The rule, written once: laneSlicedRowRule evaluates it,
// chooseLaneSlicedRows's host part computes it, explain prints it
// (gpu_input_rules.h).
const rules::Rule& laneSlicedRule() {
  static const rules::Rule rule = [] {
    using namespace rules;
    Rule rule("a thread or a warp a row of the output, by {A}'s row lengths", "a thread a row");
    Condition skewed = rule.clause(balancedRowClause());
    rule.choose(rule.clause("rows_on_warps", nonzeros >= kLaneSlicedMeanRow * rows || skewed),
                "a warp a row (its columns cut among the lanes)");
    return rule;
  }();
  return rule;
}

}  // namespace

bool laneSlicedRowRule(int64_t longestRow, int64_t rows, int64_t nonzeros) {
  return laneSlicedRule().choose({rows, nonzeros, longestRow, 0}) == 0;
}

std::string laneSlicedRuleText(const std::string& matrix) { return laneSlicedRule().text({matrix, ""}); }

ir::imp::Function chooseLaneSlicedRows(const ir::imp::Function& rows, const ir::imp::Function& lanes,
                                       const std::string& matrix) {
  const rules::Inputs inputs{matrix, ""};
  std::vector<ir::imp::Stmt> body = laneSlicedRule().hostStatements(inputs);
  body.push_back(ir::imp::If::make(laneSlicedRule().conditionOf(0, inputs), lanes.body, rows.body));
  ir::imp::Function result = rows;
  result.body = ir::imp::Block::make(body);
  keepDeviceBuffersOf(lanes, result);
  return result;
}

void keepDeviceBuffersOf(const ir::imp::Function& alternative, ir::imp::Function& chooser) {
  auto nameOf = [](const ir::imp::Expr& var) { return var.as<ir::imp::Var>()->name; };
  for (const auto& scratch : alternative.gpuThreadScratch)
    if (std::none_of(chooser.gpuThreadScratch.begin(), chooser.gpuThreadScratch.end(),
                     [&](const auto& kept) { return nameOf(kept.buffer) == nameOf(scratch.buffer); }))
      chooser.gpuThreadScratch.push_back(scratch);
  for (const auto& workspace : alternative.gpuSharedWorkspaces)
    if (std::none_of(chooser.gpuSharedWorkspaces.begin(), chooser.gpuSharedWorkspaces.end(),
                     [&](const auto& kept) { return nameOf(kept) == nameOf(workspace); }))
      chooser.gpuSharedWorkspaces.push_back(workspace);
}

}  // namespace tcc::lowering
