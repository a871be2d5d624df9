// Automatic sparse-workspace insertion (§6.2 of the sparse-workspace paper):
// classifies how a statement's results reach its output, picks the
// workspace's policy by a documented rule, and builds
//   where(forall(output levels) A(...) = W(...),
//         forall(the nest's loops) W(...) += rhs)
// with W a sparse workspace over the output's modes, stored in the output's
// mode order so that Compress produces the output's levels directly.
#include <algorithm>
#include <optional>

#include "schedule_loops.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/inserted_tensor_names.h"

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
  auto owned = std::find(nest.loops.begin() + 1, nest.loops.end(), first);
  if (owned == nest.loops.end()) {
    whyNot = first.name() + ", the output's first level, has no loop below the thread loop";
    return false;
  }
  if (owned + 1 == nest.loops.end()) {
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

std::string policyName(const SparseWorkspaceOptions& options) {
  if (options.policy == WorkspacePolicy::User) return options.userPolicy + " (a registered policy)";
  return toString(options.policy);
}

// The schedule's options, or the default ones with the policy the rule picks.
SparseWorkspaceOptions chosenOptions(const LoopNest& nest, const ir::TensorVar& output, std::string& policyReason) {
  SparseWorkspaceOptions options;
  if (nest.sparseWorkspace && nest.sparseWorkspace->policyGiven) {
    options = nest.sparseWorkspace->options;
    policyReason = policyName(options) + ": as the schedule asks";
  } else {
    options = nest.sparseWorkspace ? nest.sparseWorkspace->options : SparseWorkspaceOptions{};
    options.policy = defaultPolicy(output, policyReason);
  }
  return options;
}

// What made the nest's sparse workspace for `output`: the sparse_workspace
// command that asked for it, if any.
ir::TensorProvenance workspaceProvenance(const LoopNest& nest, const ir::TensorVar& output) {
  return ir::TensorProvenance::sparseWorkspace(output, nest.sparseWorkspaceText);
}

// ws_Y for the output Y, unless a tensor has that name.
std::string sparseWorkspaceName(LoopNest& nest, const ir::TensorVar& output) {
  return takeFreshName("ws_" + output.name(), nest.takenNames);
}

// A workspace over all of the output's modes, stored in its mode order so
// that Compress produces the output's levels directly.
ir::TensorVar wholeOutputWorkspace(LoopNest& nest, const ir::TensorVar& output) {
  std::vector<ir::LevelFormat> levels(output.order(), ir::LevelFormat::compressed());
  return ir::TensorVar(sparseWorkspaceName(nest, output), output.shape(), ir::Format(levels, output.format().modeOrdering()),
                       output.datatype(), workspaceProvenance(nest, output));
}

std::string optionFlags(const SparseWorkspaceOptions& options) {
  std::string flags;
  if (options.pipelining) flags += ", pipelined";
  if (options.doubleBuffering) flags += ", double-buffered";
  if (options.capacity > 0) flags += ", first capacity " + std::to_string(options.capacity);
  return flags;
}

// Common-iteration hoisting (§6.2): how many of the output's first levels
// the outermost loops iterate in order and so may enclose a lower-order
// workspace, under the paper's three conditions: (1) the output's levels
// are the iteration levels (each dense or unique compressed, appended in
// the loops' order), (2) the loop order and the output's order agree up to
// a position p > 0, (3) the output's levels above p take coordinates in the
// order the loops give them. sparse_workspace(j) asks for the levels above
// j's; sparse_workspace(i) on the first index, or a loop on threads, for
// none. `why` says why none are hoisted.
size_t hoistedLevels(const LoopNest& nest, const ir::Access& lhs, const std::vector<IndexVar>& outputOrder,
                     const std::vector<IndexVar>& threadLoops, std::string& why) {
  const ir::TensorVar& output = lhs.tensor();
  const ir::Format& format = output.format();
  size_t agree = 0;
  while (agree < nest.loops.size() && agree + 1 < outputOrder.size() && nest.loops[agree] == outputOrder[agree])
    ++agree;
  std::optional<size_t> asked;
  if (nest.sparseWorkspace && nest.sparseWorkspace->var)
    asked = std::find(outputOrder.begin(), outputOrder.end(), *nest.sparseWorkspace->var) - outputOrder.begin();
  auto refuse = [&](const std::string& reason) -> size_t {
    if (asked && *asked > 0) {
      std::string text = "sparse_workspace(" + nest.sparseWorkspace->var->name() + "): hoisting " +
                         joinNames(std::vector<IndexVar>(outputOrder.begin(), outputOrder.begin() + *asked)) +
                         " out of the workspace needs " + reason;
      if (nest.sparseWorkspaceCommand) throw ScheduleError(*nest.sparseWorkspaceCommand, text);
      throw LoweringError(text);
    }
    why = reason;
    return 0;
  };
  if (asked && *asked == 0) {
    why = "sparse_workspace names " + output.name() + "'s first index";
    return 0;
  }
  // Threads may run the hoisted loop over the rows of a {dense, compressed}
  // output (each drains a workspace of its own, rows assembled in
  // parallel); any other thread loop fills a whole-output workspace each.
  bool rowThreads = format.order() == 2 && format.level(0).isDense() &&
                    format.level(1).kind == ir::LevelKind::Compressed && format.level(1).unique &&
                    threadLoops.size() == 1 && threadLoops[0] == outputOrder[0] && !nest.loops.empty() &&
                    nest.loops[0] == outputOrder[0];
  if (!threadLoops.empty() && !rowThreads)
    return refuse("its threads, if any, to run the loop over the rows of a {dense, compressed} output (here each "
                  "thread fills a workspace of its own over all of " + output.name() + ")");
  for (int level = 0; level < format.order(); ++level) {
    const ir::LevelFormat& kind = format.level(level);
    if (!kind.isDense() && !(kind.kind == ir::LevelKind::Compressed && kind.unique))
      return refuse(output.name() + "'s levels to be dense or unique compressed, appended in order; it is stored " +
                    format.toString());
  }
  // (A dense level below a compressed one is not appended: the workspace
  // then compresses into the whole output.)
  if (!isAssemblableOutputFormat(format))
    return refuse(output.name() + "'s levels to be appended in order, dense levels above compressed ones; it is "
                  "stored " + format.toString());
  size_t wanted = asked ? *asked : agree;
  if (agree == 0 || wanted > agree)
    return refuse("the outermost loops to iterate " + output.name() + "'s first levels in its order " +
                  joinNames(outputOrder) + "; the loops are " + joinNames(nest.loops));
  return wanted;
}

// A workspace over the output's modes below its first `hoisted` levels, in
// the output's mode order; `indices` gets the variables it is indexed by.
ir::TensorVar workspaceBelow(LoopNest& nest, const ir::Access& lhs, const std::vector<IndexVar>& outputOrder,
                             size_t hoisted, std::vector<IndexVar>& indices) {
  const ir::TensorVar& output = lhs.tensor();
  std::vector<ir::Dimension> shape;
  for (int mode = 0; mode < output.order(); ++mode) {
    const IndexVar& var = lhs.indices()[mode];
    if (std::find(outputOrder.begin(), outputOrder.begin() + hoisted, var) != outputOrder.begin() + hoisted) continue;
    indices.push_back(var);
    shape.push_back(output.shape()[mode]);
  }
  std::vector<int> modes;
  for (size_t level = hoisted; level < outputOrder.size(); ++level)
    modes.push_back(static_cast<int>(std::find(indices.begin(), indices.end(), outputOrder[level]) - indices.begin()));
  std::vector<ir::LevelFormat> levels(indices.size(), ir::LevelFormat::compressed());
  return ir::TensorVar(sparseWorkspaceName(nest, output), shape, ir::Format(levels, modes), output.datatype(),
                       workspaceProvenance(nest, output));
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

SparseWorkspaceOptions chosenWorkspaceOptions(const ir::TensorVar& workspace, SparseWorkspaceOptions given,
                                              bool policyGiven, std::string& why) {
  if (policyGiven) {
    why = policyName(given) + ": as the schedule asks";
    return given;
  }
  given.policy = defaultPolicy(workspace, why);
  return given;
}

std::string workspaceOptionFlags(const SparseWorkspaceOptions& options) { return optionFlags(options); }

ir::IndexStmt buildSparseWorkspaceNest(LoopNest& nest, const ir::Access& lhs, const ir::IndexExpr& rhs,
                                       const std::optional<std::string>& scatters) {
  const ir::TensorVar& output = lhs.tensor();
  const ir::Format& format = output.format();
  if (output.order() < 1 || output.order() > 4)
    throw LoweringError("the results of " + output.name() + " scatter out of its storage order and need a sparse "
                        "workspace, which holds orders 1 to 4; " + output.name() + " has order " +
                        std::to_string(output.order()));
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

  std::string whyNotHoisted;
  size_t hoisted = hoistedLevels(nest, lhs, outputOrder, threadLoops, whyNotHoisted);
  std::vector<IndexVar> hoistedLoops(nest.loops.begin(), nest.loops.begin() + hoisted);
  std::vector<IndexVar> innerLoops(nest.loops.begin() + hoisted, nest.loops.end());
  std::vector<IndexVar> workspaceIndices;
  ir::TensorVar workspace = hoisted ? workspaceBelow(nest, lhs, outputOrder, hoisted, workspaceIndices)
                                    : wholeOutputWorkspace(nest, output);
  if (!hoisted) workspaceIndices = lhs.indices();
  std::string policyReason;
  SparseWorkspaceOptions options = chosenOptions(nest, workspace, policyReason);
  std::string ownership;  // why threads own ranges of the first level, or why not
  if (!threadLoops.empty() && !hoisted) {
    std::string whyNot;
    options.ownerPartition = threadsCanOwnRanges(nest, threadLoops, outputOrder[0], rhs, whyNot);
    ownership = options.ownerPartition
                  ? "not taken: merging threads' overlapping runs (with each thread owning its ranges of " +
                      outputOrder[0].name() + ", the workspaces hold each result once between them, not once per "
                      "thread)"
                  : "not taken: threads owning ranges of " + outputOrder[0].name() + " (" + whyNot + ")";
  }
  nest.sparseWorkspaceOptions[workspace.name()] = options;

  std::vector<IndexVar> consumerLoops(outputOrder.begin() + hoisted, outputOrder.end());
  // The schedule's precomputes put their dense workspaces' wheres among
  // the loops that fill the sparse one.
  std::vector<IndexVar> enclosing;
  for (const auto& loop : hoistedLoops)
    for (const auto& origin : nest.originsOf(loop))
      if (std::find(enclosing.begin(), enclosing.end(), origin) == enclosing.end()) enclosing.push_back(origin);
  ir::IndexStmt producer =
    nest.precomputes.empty()
      ? nestLoops(innerLoops, ir::AssignmentNode::make(workspace(workspaceIndices), rhs, true), nest.attributes)
      : placePrecomputesInSparseFill(nest, innerLoops, workspace(workspaceIndices), rhs, output, enclosing);
  ir::IndexStmt consumer =
    nestLoops(consumerLoops, ir::AssignmentNode::make(lhs, ir::IndexExpr(workspace(workspaceIndices)), false), {});
  ir::IndexStmt statement = nestLoops(hoistedLoops, ir::where(consumer, producer), nest.attributes);
  if (!nest.relations.empty()) statement = ir::suchThat(statement, nest.relations);

  std::string classification =
    scatters ? "sparse scattering of order " + std::to_string(scatteringOrder) + ": " + *scatters
             : "classified as " + std::string(scatteringOrder == 0 ? "appending" : "scattering") +
                 "; sparse_workspace or the Workspace race strategy asks for a sparse workspace anyway";
  nest.decisions.push_back(classification + " (loops over " + joinNames(loops) + ", output order " +
                           joinNames(outputOrder) + ", without reductions " + joinNames(kept) + ")");
  std::string flags;
  if (!threadLoops.empty() && !hoisted && options.ownerPartition) {
    std::vector<IndexVar> above(nest.loops.begin(), std::find(nest.loops.begin(), nest.loops.end(), outputOrder[0]));
    flags += ", one per thread; " +
             std::string(above.size() == 1 ? "the loop over " + joinNames(above) + " runs"
                                            : "the loops over " + joinNames(above) + " run") +
             " whole on each thread, which owns ranges of " + outputOrder[0].name() + " (" + output.name() +
             "'s first level; up to four ranges per thread, fewer where a range's work is small beside the segments "
             "it searches, taken dynamically, of about equal work: a pass on the threads (each over an equal range "
             "of " + outputOrder[0].name() + ") first counts how often the loops below run for each " +
             outputOrder[0].name() + ", and the ranges are cut where the running count reaches each range's share) "
             "and skips the rest by a binary search, so the threads' runs are disjoint and need no merge: each range "
             "of " + outputOrder[0].name() + " is then compressed from its thread's run, where it lies, into its own "
             "slice of " + output.name() + " on the threads (counts, a prefix sum, then the arrays)";
  } else if (!threadLoops.empty() && !hoisted)
    flags += ", one per thread of the loop over " + joinNames(threadLoops) +
             ", sorted and merged on their threads, then merged in parallel by ranges of " + outputOrder[0].name() +
             ", each range compressed into its own slice of " + output.name();
  if (!threadLoops.empty() && hoisted)
    flags += ", one per thread of the loop over " + joinNames(threadLoops) + ", whose rows of " + output.name() +
             " are assembled in parallel";
  flags += optionFlags(options);
  if (hoisted) {
    std::string levels = hoisted == 1 ? "level" : "levels";
    nest.decisions.push_back(
      "hoisted common iteration: the outermost loops " + joinNames(hoistedLoops) + " iterate " + output.name() +
      "'s first " + levels + " in its order, so they enclose the workspace (§6.2: " + output.name() + "'s levels " +
      format.toString() + " are appended in the order the loops give; the loop order and " + output.name() +
      "'s order agree up to position " + std::to_string(hoisted) + "; " + output.name() + "'s " + levels + " over " +
      joinNames(hoistedLoops) + (hoisted == 1 ? " takes its" : " take their") +
      " coordinates in order, as the inputs give them)");
    nest.decisions.push_back("inserted sparse workspace " + workspace.name() + " of order " +
                             std::to_string(workspace.order()) + " over " + joinNames(consumerLoops) + " (policy " +
                             policyReason + flags + "), drained after each iteration of " +
                             joinNames(hoistedLoops) + " and appended to " + output.name() + "'s levels " +
                             joinNames(consumerLoops) + " in order");
    nest.decisions.push_back("not taken: a sparse workspace holding all of " + output.name() + " (order " +
                             std::to_string(output.order()) + "; the hoisted one holds the results of one iteration "
                             "of " + joinNames(hoistedLoops) + " at a time)");
  } else {
    nest.decisions.push_back("inserted sparse workspace " + workspace.name() + " of order " +
                             std::to_string(output.order()) + " (policy " + policyReason + flags +
                             "), stored in " + output.name() + "'s order " + joinNames(outputOrder) +
                             " and compressed into " + format.toString() + " after the loops");
    if (!ownership.empty()) nest.decisions.push_back(ownership);
  }
  if (scatters || hoisted) {
    std::string dense;
    if (scatteringOrder > 1)
      dense = "the results scatter over " + std::to_string(scatteringOrder) +
              " levels, a dense workspace covers the last one only";
    else if (scatters)
      dense = "the output's last level is not what scatters";
    else
      dense = "sparse_workspace asks for a sparse one";
    nest.decisions.push_back("not taken: a dense workspace (" + dense + ")" +
                             (hoisted ? "" : "; hoisting common loops (" + whyNotHoisted + ")"));
  }
  return statement;
}

std::string workspaceOptionsIgnoredOnGpu(const LoopNest& nest) {
  if (!nest.sparseWorkspace) return "";
  const SparseWorkspaceCommand& asked = *nest.sparseWorkspace;
  std::string options = asked.policyGiven ? "policy " + policyName(asked.options) : "";
  std::string flags = optionFlags(asked.options);
  if (!flags.empty()) options += options.empty() ? flags.substr(2) : flags;
  if (options.empty()) return "";
  return " (its options, " + options + ", describe the workspace's storage on the CPU and have no effect on the GPU)";
}

bool takeWorkspaceIntoDenseOutputOnGpu(LoopNest& nest, const ir::Access& lhs) {
  const ir::TensorVar& output = lhs.tensor();
  // (Only the command's: the Workspace race strategy's is for CPU threads.)
  if (!nest.sparseWorkspace || !nest.sparseWorkspaceCommand || output.order() == 0 || !output.format().isAllDense())
    return false;
  // sparse_workspace(j) hoists the loops over the output's levels above j's
  // out of the where, sparse_workspace() the outermost loops that iterate
  // them in order (hoistedLevels); one of them on the GPU puts the where
  // inside it, and each GPU thread there fills a list of its own: one of
  // order 1 filled by the thread alone (no GPU loop below). Any other form
  // takes the output.
  const ir::Format& format = output.format();
  const size_t levels = static_cast<size_t>(format.order());
  auto levelVar = [&](size_t level) { return lhs.indices()[format.modeOfLevel(static_cast<int>(level))]; };
  size_t hoisted = 0;
  if (nest.sparseWorkspace->var)
    while (hoisted < levels && !(levelVar(hoisted) == *nest.sparseWorkspace->var)) ++hoisted;
  else
    while (hoisted < nest.loops.size() && hoisted + 1 < levels && nest.loops[hoisted] == levelVar(hoisted)) ++hoisted;
  auto onGpu = [&](size_t loop) {
    auto found = nest.attributes.find(nest.loops[loop]);
    return found != nest.attributes.end() && ir::isGpuUnit(found->second.parallelUnit);
  };
  bool whereInsideGpuLoop = false, gpuLoopInsideWhere = false;
  for (size_t loop = 0; loop < nest.loops.size(); ++loop)
    if (onGpu(loop)) (loop < hoisted ? whereInsideGpuLoop : gpuLoopInsideWhere) = true;
  std::string where = "would stand outside every GPU loop, where all GPU threads would insert into one workspace";
  if (whereInsideGpuLoop) {
    if (hoisted + 1 == levels && !gpuLoopInsideWhere) return false;
    where = gpuLoopInsideWhere ? "would stand between GPU loops, where the threads of the inner ones would share "
                                 "one GPU thread's list"
                               : "would hold " + std::to_string(format.order() - hoisted) + " of " + output.name() +
                                   "'s levels, and a GPU thread's list holds one";
  }
  nest.decisions.push_back(
    nest.sparseWorkspaceText + ": on the cuda target " + output.name() + " (dense) takes the results itself: its "
    "where " + where + ", so the loops add into " + output.name() + " in place (zeroed first where they sum), each "
    "GPU loop with its parallelize's race strategy (atomic adds where iterations of a raced variable meet in one "
    "entry); a workspace would only gather what " + output.name() + " holds in place. No sparse workspace is made" +
    workspaceOptionsIgnoredOnGpu(nest));
  nest.sparseWorkspace.reset();
  nest.sparseWorkspaceCommand.reset();
  nest.sparseWorkspaceText.clear();
  return true;
}

ir::IndexStmt buildTermwiseSparseWorkspace(LoopNest& nest, const ir::Access& lhs,
                                           const std::vector<WorkspaceTerm>& terms) {
  const ir::TensorVar& output = lhs.tensor();
  const ir::Format& format = output.format();
  if (output.order() < 1 || output.order() > 4)
    throw LoweringError("the terms of " + output.name() + "'s sum reduce over different variables and need a sparse "
                        "workspace, which holds orders 1 to 4; " + output.name() + " has order " +
                        std::to_string(output.order()));
  ir::TensorVar workspace = wholeOutputWorkspace(nest, output);
  std::string policyReason;
  SparseWorkspaceOptions options = chosenOptions(nest, workspace, policyReason);
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

ir::IndexStmt buildTermwiseAccumulation(LoopNest& nest, const ir::Access& lhs, const std::vector<WorkspaceTerm>& terms,
                                        bool cudaTarget) {
  const ir::TensorVar& output = lhs.tensor();
  std::optional<ir::IndexStmt> sums;
  std::string nests, summed;
  for (size_t t = 0; t < terms.size(); ++t) {
    const WorkspaceTerm& term = terms[t];
    ir::IndexStmt adds = nestLoops(term.loops, ir::AssignmentNode::make(lhs, term.value, true), {});
    sums = sums ? ir::sequence(*sums, adds) : adds;
    nests += (t ? "; " : "") + ir::toString(term.value) + " over loops " + joinNames(term.loops);
    if (!summed.empty()) summed += ", ";
    summed += term.summed.empty() ? ir::toString(term.value) + " sums nothing"
                                  : ir::toString(term.value) + " sums " + joinNames(term.summed);
  }
  nest.decisions.push_back("the terms reduce over different variables (" + summed + "), and no one loop order visits "
                           "every term's sparse inputs in storage order with " + output.name() + "'s indices " +
                           joinNames(lhs.indices()) + " outermost");
  if (cudaTarget) {
    nest.decisions.push_back("each term adds into " + output.name() + " (dense, zeroed before the kernels run) in a "
                             "loop nest of its own, a kernel each on the cuda target (" + nests + ")");
    nest.decisions.push_back("not taken: a sparse workspace of " + output.name() + "'s entries (on the GPU its "
                             "inserts, sort and merge would only gather what the terms can add into the dense " +
                             output.name() + " in place)");
    return *sums;
  }
  nest.decisions.push_back("each term adds into " + output.name() + " (dense, zeroed once before the first nest) in a "
                           "loop nest of its own, one nest after another (" + nests + "): each entry gets its terms' "
                           "additions in loop order");
  nest.decisions.push_back("not taken: a sparse workspace of " + output.name() + "'s entries (its inserts, sort and "
                           "merge would only gather what the terms can add into the dense " + output.name() +
                           " in place)");
  return *sums;
}

}  // namespace tcc::lowering
