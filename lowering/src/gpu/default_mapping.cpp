#include "tcc/lowering/gpu_default_mapping.h"

#include <algorithm>
#include <set>

#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

namespace {

// Columns of the dense operand one warp takes (2 per lane): on the H100,
// tiles of 64 beat tiles of 128 where a few long rows hold the time (more
// warps share a row's columns) and lose little elsewhere.
constexpr int kColumnTile = 64;

ScheduleCommand parallelize(const ir::IndexVar& var, ir::ParallelUnit unit, ir::OutputRaceStrategy strategy) {
  std::string text = "parallelize(" + var.name() + ", " + ir::toString(unit) + ", " + ir::toString(strategy) + ")";
  return {ParallelizeCommand{var, unit, strategy}, text};
}

bool contains(const std::vector<ir::IndexVar>& vars, const ir::IndexVar& var) {
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}

}  // namespace

bool parallelizesLoops(const ScheduleRequest& request) {
  return std::any_of(request.commands.begin(), request.commands.end(), [](const ScheduleCommand& command) {
    return std::holds_alternative<ParallelizeCommand>(command.kind);
  });
}

std::vector<ScheduleCommand> defaultGpuMapping(const ir::IndexStmt& assignment,
                                               const std::vector<ir::IndexVar>& loopOrder,
                                               std::vector<std::string>& reasons) {
  std::vector<ScheduleCommand> commands;
  if (loopOrder.empty()) return commands;
  const auto* node = assignment.as<ir::AssignmentNode>();
  if (!node) return commands;
  const std::vector<ir::IndexVar>& outputVars = node->lhs.indices();

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
  bool rowLike = std::any_of(loopOrder.begin() + 1, loopOrder.end(),
                             [&](const ir::IndexVar& var) { return sparseLevelVars.count(var) > 0; });
  if (!rowLike) {
    commands.push_back(parallelize(rows, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::NoRaces));
    reasons.push_back("default GPU mapping: one thread per iteration of " + rows.name());
    return commands;
  }
  commands.push_back(parallelize(rows, ir::ParallelUnit::GPUWarp, ir::OutputRaceStrategy::NoRaces));
  auto denseColumn = std::find_if(loopOrder.begin() + 1, loopOrder.end(), [&](const ir::IndexVar& var) {
    return !sparseTensorVars.count(var) && contains(outputVars, var);
  });
  if (denseColumn != loopOrder.end()) {
    // Columns in tiles of kColumnTile; a warp per (row, tile); lane l of
    // the warp owns columns l and l + 32 of its tile and sums them together
    // in one walk over the row's nonzeros (unroll and jam).
    const ir::IndexVar& column = *denseColumn;
    ir::IndexVar tile(column.name() + "_tile"), inTile(column.name() + "_in"), lane(column.name() + "_lane"),
        round(column.name() + "_round"), warp(rows.name() + column.name() + "_warp");
    std::vector<ir::IndexVar> order{rows, tile, lane, round};
    for (auto it = loopOrder.begin() + 1; it != loopOrder.end(); ++it)
      if (!(*it == column)) order.push_back(*it);
    commands.clear();
    commands.push_back({ir::SplitRelation{column, tile, inTile, kColumnTile},
                        "split(" + column.name() + ", " + tile.name() + ", " + inTile.name() + ", " +
                            std::to_string(kColumnTile) + ")"});
    commands.push_back({ir::SplitRelation{inTile, round, lane, 32},
                        "split(" + inTile.name() + ", " + round.name() + ", " + lane.name() + ", 32)"});
    std::string text = "reorder(";
    for (size_t k = 0; k < order.size(); ++k) text += (k ? ", " : "") + order[k].name();
    commands.push_back({ReorderCommand{order}, text + ")"});
    commands.push_back({ir::FuseRelation{rows, tile, warp},
                        "fuse(" + rows.name() + ", " + tile.name() + ", " + warp.name() + ")"});
    commands.push_back(parallelize(warp, ir::ParallelUnit::GPUWarp, ir::OutputRaceStrategy::NoRaces));
    commands.push_back(parallelize(lane, ir::ParallelUnit::GPUThread, ir::OutputRaceStrategy::NoRaces));
    commands.push_back({UnrollCommand{round, kColumnTile / 32},
                        "unroll(" + round.name() + ", " + std::to_string(kColumnTile / 32) + ")"});
    // The walk over a row's nonzeros, unrolled: the loads of several
    // nonzeros (and of the B rows they pick) in flight at once.
    const ir::IndexVar& innermost = order.back();
    bool unrollNonzeros = sparseLevelVars.count(innermost) > 0;
    if (unrollNonzeros)
      commands.push_back({UnrollCommand{innermost, 4}, "unroll(" + innermost.name() + ", 4)"});
    reasons.push_back("default GPU mapping: the dense " + column.name() + " in tiles of " +
                      std::to_string(kColumnTile) + " columns, one warp per row " + rows.name() +
                      " and tile; lane l owns the tile's columns l and l + 32, summed together " +
                      "in one walk over the row's nonzeros (unroll and jam)" +
                      (unrollNonzeros ? ", that walk unrolled by 4" : ""));
    return commands;
  }
  const ir::IndexVar& inner = loopOrder[1];
  bool summed = !contains(outputVars, inner);
  commands.push_back(parallelize(inner, ir::ParallelUnit::GPUThread,
                                 summed ? ir::OutputRaceStrategy::ParallelReduction : ir::OutputRaceStrategy::NoRaces));
  reasons.push_back("default GPU mapping: one warp per row " + rows.name() + ", its lanes over " + inner.name() +
                    (summed ? " (partial sums added with warp shuffles)" : ""));
  return commands;
}

}  // namespace tcc::lowering
