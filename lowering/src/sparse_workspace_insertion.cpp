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
#include "tcc/ir/index_queries.h"

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

// Whether each thread of the outermost (thread) loop can own a range of the
// output's first level: that level's variable must be the loop right below
// the thread loop, iterated from dense or ordered compressed levels only, so
// that a range is one interval of every operand's segment (a binary search),
// and must have loops below it, whose work pays for the searches (every
// range searches every segment the thread loop reaches). Otherwise threads
// insert anywhere and their runs are merged.
bool threadsCanOwnRanges(const LoopNest& nest, const std::vector<IndexVar>& threadLoops, const IndexVar& first,
                         const ir::IndexExpr& rhs, std::string& whyNot) {
  if (threadLoops.size() != 1 || nest.loops.size() < 2 || !(nest.loops[0] == threadLoops[0])) {
    whyNot = "the thread loop is not the outermost loop";
    return false;
  }
  if (!(nest.loops[1] == first)) {
    whyNot = first.name() + ", the output's first level, is not the loop right below the thread loop";
    return false;
  }
  if (nest.loops.size() < 3) {
    whyNot = "the loop over " + first.name() + " is innermost, so a search per range and segment would cost as much "
             "as the work it skips";
    return false;
  }
  for (const auto& access : ir::accessesOf(rhs)) {
    const ir::Format& format = access.tensor().format();
    for (size_t mode = 0; mode < access.indices().size(); ++mode) {
      if (!(access.indices()[mode] == first)) continue;
      const ir::LevelFormat& level = format.level(format.levelOfMode(static_cast<int>(mode)));
      if (level.isDense() || (level.kind == ir::LevelKind::Compressed && level.ordered)) continue;
      whyNot = access.tensor().name() + " iterates " + first.name() + " from a " + level.toString() +
               " level, which no binary search can cut into ranges";
      return false;
    }
  }
  return true;
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

  SparseWorkspaceOptions options;
  std::string policyReason;
  if (nest.sparseWorkspace && nest.sparseWorkspace->policyGiven) {
    options = nest.sparseWorkspace->options;
    policyReason = std::string(toString(options.policy)) + ": as the schedule asks";
  } else {
    options = nest.sparseWorkspace ? nest.sparseWorkspace->options : SparseWorkspaceOptions{};
    options.policy = defaultPolicy(output, policyReason);
  }

  std::vector<ir::LevelFormat> levels(output.order(), ir::LevelFormat::compressed());
  ir::TensorVar workspace("ws_" + output.name(), output.shape(), ir::Format(levels, format.modeOrdering()),
                          output.datatype());

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
  std::string flags, ownership;
  if (!threadLoops.empty()) {
    std::string whyNot;
    options.ownerPartition = threadsCanOwnRanges(nest, threadLoops, outputOrder[0], rhs, whyNot);
    if (options.ownerPartition) {
      flags += ", one per thread; the loop over " + joinNames(threadLoops) + " runs whole on each thread, which "
               "owns ranges of " + outputOrder[0].name() + " (" + output.name() + "'s first level, four ranges per "
               "thread, taken dynamically) and skips the rest by a binary search, so the threads' runs are disjoint "
               "and their merge only concatenates";
      ownership = "not taken: merging threads' overlapping runs (with each thread owning its ranges of " +
                  outputOrder[0].name() + ", the workspaces hold each result once between them, not once per thread)";
    } else {
      flags += ", one per thread of the loop over " + joinNames(threadLoops) +
               ", sorted and merged on their threads, then merged in parallel by ranges of " + outputOrder[0].name();
      ownership = "not taken: threads owning ranges of " + outputOrder[0].name() + " (" + whyNot + ")";
    }
  }
  if (options.pipelining) flags += ", pipelined";
  if (options.doubleBuffering) flags += ", double-buffered";
  if (options.capacity > 0) flags += ", first capacity " + std::to_string(options.capacity);
  nest.decisions.push_back("inserted sparse workspace " + workspace.name() + " of order " +
                           std::to_string(output.order()) + " (policy " + policyReason + flags +
                           "), stored in " + output.name() + "'s order " + joinNames(outputOrder) +
                           " and compressed into " + format.toString() + " after the loops");
  if (!ownership.empty()) nest.decisions.push_back(ownership);
  nest.sparseWorkspaceOptions[workspace.name()] = options;
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

}  // namespace tcc::lowering
