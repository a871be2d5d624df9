// Automatic sparse-workspace insertion (§6.2 of the sparse-workspace paper):
// classifies how a statement's results reach its output, picks the
// workspace's policy by a documented rule, and builds
//   where(forall(output levels) A(...) = W(...),
//         forall(the nest's loops) W(...) += rhs)
// with W a sparse workspace over the output's modes, stored in the output's
// mode order so that Compress produces the output's levels directly.
#include <algorithm>

#include "schedule_loops.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"

namespace tcc::lowering {

namespace {

using ir::IndexVar;

// The default policy: a bucket per first-level coordinate (a linear-time
// bucket sort) when the output has at most two levels and its first level
// at most kLargestBucketedLevel coordinates; otherwise hashing into a table
// sized by the result (the paper's choice for tensor algebra).
constexpr int64_t kLargestBucketedLevel = int64_t{1} << 20;

WorkspacePolicy defaultPolicy(const ir::TensorVar& output, std::string& why) {
  const ir::Format& format = output.format();
  const ir::Dimension& first = output.dimension(format.modeOfLevel(0));
  if (output.order() <= 2 && first.isFixed() && first.size() <= kLargestBucketedLevel) {
    why = "bucket: " + std::to_string(output.order()) + " level(s) and " + std::to_string(first.size()) +
          " first-level coordinates (at most 2^20), one bucket each";
    return WorkspacePolicy::Bucket;
  }
  if (output.order() <= 2 && !first.isFixed()) {
    why = "hash: the first level's size is known only when the kernel runs, so no bucket count is fixed";
    return WorkspacePolicy::Hash;
  }
  why = output.order() > 2 ? "hash: " + std::to_string(output.order()) + " levels (buckets by the first level "
                                 "alone would leave long runs to sort)"
                           : "hash: more than 2^20 first-level coordinates";
  return WorkspacePolicy::Hash;
}

// The schedule's options, or the default ones with the policy the rule picks.
SparseWorkspaceOptions chosenOptions(const LoopNest& nest, const ir::TensorVar& output, std::string& policyReason) {
  SparseWorkspaceOptions options;
  if (nest.sparseWorkspace && nest.sparseWorkspace->policyGiven) {
    options = nest.sparseWorkspace->options;
    policyReason = std::string(toString(options.policy)) + ": as the schedule asks";
  } else {
    options = nest.sparseWorkspace ? nest.sparseWorkspace->options : SparseWorkspaceOptions{};
    options.policy = defaultPolicy(output, policyReason);
  }
  return options;
}

// A workspace over all of the output's modes, stored in its mode order so
// that Compress produces the output's levels directly.
ir::TensorVar wholeOutputWorkspace(const ir::TensorVar& output) {
  std::vector<ir::LevelFormat> levels(output.order(), ir::LevelFormat::compressed());
  return ir::TensorVar("ws_" + output.name(), output.shape(), ir::Format(levels, output.format().modeOrdering()),
                       output.datatype());
}

std::string optionFlags(const SparseWorkspaceOptions& options) {
  std::string flags;
  if (options.pipelining) flags += ", pipelined";
  if (options.doubleBuffering) flags += ", double-buffered";
  if (options.capacity > 0) flags += ", first capacity " + std::to_string(options.capacity);
  return flags;
}

// The statement's variables in loop order, each once (a derived loop
// stands for the variables it derives from).
std::vector<IndexVar> inputOrder(const LoopNest& nest) {
  std::vector<IndexVar> order;
  for (const auto& loop : nest.loops)
    for (const auto& origin : nest.originsOf(loop))
      if (std::find(order.begin(), order.end(), origin) == order.end()) order.push_back(origin);
  return order;
}

}  // namespace

ir::IndexStmt buildSparseWorkspaceNest(LoopNest& nest, const ir::Access& lhs, const ir::IndexExpr& rhs,
                                       const std::optional<std::string>& scatters) {
  const ir::TensorVar& output = lhs.tensor();
  const ir::Format& format = output.format();
  if (output.order() < 1 || output.order() > 4)
    throw LoweringError("the results of " + output.name() + " scatter out of its storage order and need a sparse "
                        "workspace, which holds orders 1 to 4; " + output.name() + " has order " +
                        std::to_string(output.order()));
  if (nest.precomputeCommand)
    throw ScheduleError(*nest.precomputeCommand, nest.precomputeText + ": the results of " + output.name() +
                        " go through a sparse workspace, and a precompute inside one is not supported yet");
  std::vector<IndexVar> threadLoops;
  for (const auto& loop : nest.loops)
    if (auto found = nest.attributes.find(loop); found != nest.attributes.end() && found->second.onThreads())
      threadLoops.push_back(loop);

  std::vector<IndexVar> outputOrder;
  for (int level = 0; level < format.order(); ++level) outputOrder.push_back(lhs.indices()[format.modeOfLevel(level)]);
  std::vector<IndexVar> loops = inputOrder(nest);
  std::vector<IndexVar> kept;  // reductions eliminated
  for (const auto& var : loops)
    if (std::find(outputOrder.begin(), outputOrder.end(), var) != outputOrder.end()) kept.push_back(var);
  // Leading loops over the output's leading levels could be hoisted out of
  // the where (common iteration); the rest scatter.
  size_t common = 0;
  while (common < loops.size() && common < outputOrder.size() && loops[common] == outputOrder[common]) ++common;
  size_t scatteringOrder = outputOrder.size() - common;

  std::string policyReason;
  SparseWorkspaceOptions options = chosenOptions(nest, output, policyReason);
  ir::TensorVar workspace = wholeOutputWorkspace(output);
  nest.sparseWorkspaceOptions[workspace.name()] = options;

  ir::IndexStmt producer = nestLoops(nest.loops, ir::AssignmentNode::make(workspace(lhs.indices()), rhs, true),
                                     nest.attributes);
  if (!nest.relations.empty()) producer = ir::suchThat(producer, nest.relations);
  ir::IndexStmt consumer =
    nestLoops(outputOrder, ir::AssignmentNode::make(lhs, ir::IndexExpr(workspace(lhs.indices())), false), {});

  std::string classification =
    scatters ? "sparse scattering of order " + std::to_string(scatteringOrder) + ": " + *scatters
             : "classified as " + std::string(scatteringOrder == 0 ? "appending" : "scattering") +
                 "; sparse_workspace or the Workspace race strategy asks for a sparse workspace anyway";
  nest.decisions.push_back(classification + " (loops over " + joinNames(loops) + ", output order " +
                           joinNames(outputOrder) + ", without reductions " + joinNames(kept) + ")");
  std::string flags;
  if (!threadLoops.empty())
    flags += ", one per thread of the loop over " + joinNames(threadLoops) +
             ", sorted and merged on their threads, then merged in parallel by ranges of " + outputOrder[0].name();
  flags += optionFlags(options);
  nest.decisions.push_back("inserted sparse workspace " + workspace.name() + " of order " +
                           std::to_string(output.order()) + " (policy " + policyReason + flags +
                           "), stored in " + output.name() + "'s order " + joinNames(outputOrder) +
                           " and compressed into " + format.toString() + " after the loops");
  if (scatters) {
    nest.decisions.push_back(std::string("not taken: a dense workspace (") +
                             (scatteringOrder > 1 ? "the results scatter over " + std::to_string(scatteringOrder) +
                                                      " levels, a dense workspace covers the last one only"
                                                  : "the output's last level is not what scatters") +
                             ")" +
                             (common > 0 ? "; hoisting the common loops " +
                                             joinNames(std::vector<IndexVar>(outputOrder.begin(),
                                                                             outputOrder.begin() + common)) +
                                             " out of the workspace (not implemented: the workspace holds every level)"
                                         : "; hoisting common loops (the outermost loop is not " + output.name() +
                                             "'s first level)"));
  }
  return ir::where(consumer, producer);
}

ir::IndexStmt buildTermwiseSparseWorkspace(LoopNest& nest, const ir::Access& lhs,
                                           const std::vector<WorkspaceTerm>& terms) {
  const ir::TensorVar& output = lhs.tensor();
  const ir::Format& format = output.format();
  if (output.order() < 1 || output.order() > 4)
    throw LoweringError("the terms of " + output.name() + "'s sum reduce over different variables and need a sparse "
                        "workspace, which holds orders 1 to 4; " + output.name() + " has order " +
                        std::to_string(output.order()));
  std::string policyReason;
  SparseWorkspaceOptions options = chosenOptions(nest, output, policyReason);
  ir::TensorVar workspace = wholeOutputWorkspace(output);
  nest.sparseWorkspaceOptions[workspace.name()] = options;

  std::vector<IndexVar> outputOrder;
  for (int level = 0; level < format.order(); ++level) outputOrder.push_back(lhs.indices()[format.modeOfLevel(level)]);
  std::optional<ir::IndexStmt> producer;
  std::string nests;
  for (size_t t = 0; t < terms.size(); ++t) {
    const WorkspaceTerm& term = terms[t];
    ir::IndexStmt fill =
      nestLoops(term.loops, ir::AssignmentNode::make(workspace(lhs.indices()), term.value, true), {});
    producer = producer ? ir::sequence(*producer, fill) : fill;
    nests += (t ? "; " : "") + ir::toString(term.value) + " over loops " + joinNames(term.loops);
  }
  ir::IndexStmt consumer =
    nestLoops(outputOrder, ir::AssignmentNode::make(lhs, ir::IndexExpr(workspace(lhs.indices())), false), {});

  std::string sums;
  for (const auto& term : terms) {
    if (!sums.empty()) sums += ", ";
    sums += term.summed.empty() ? ir::toString(term.value) + " sums nothing"
                                : ir::toString(term.value) + " sums " + joinNames(term.summed);
  }
  nest.decisions.push_back("the terms reduce over different variables (" + sums + "), and no one loop order visits "
                           "every term's sparse inputs in storage order with " + output.name() + "'s indices " +
                           joinNames(lhs.indices()) + " outermost");
  nest.decisions.push_back("inserted sparse workspace " + workspace.name() + " of order " +
                           std::to_string(output.order()) + " (policy " + policyReason + optionFlags(options) +
                           "): each term inserts its components in a loop nest of its own (" + nests +
                           "), the workspace adds repeated coordinates, and one compress stores it in " +
                           output.name() + "'s order " + joinNames(outputOrder) + " as " + format.toString());
  nest.decisions.push_back("not taken: a scalar temporary per entry of " + output.name() +
                           " (the loops over its indices would have to enclose a reduction that some input stores "
                           "above them, or the output would be appended out of order)");
  return ir::where(consumer, *producer);
}

}  // namespace tcc::lowering
