// The CSR SpMM kernels of the default GPU mapping and the rule that picks
// one per input (see gpu_spmm_mappings.h).
//
// What the rule rests on (H100, bench/cuda/RESULTS.md, cuSPARSE time / tcc
// time, N = 32 / 128 / 256):
//  - Tiles of 128 against 64 (h100_full.txt): on every input with at least
//    4096 rows and no row of 1024 or more, 128 wins or ties at N >= 128
//    (kron(Pd,cage5) 1.04 / 1.01 against 0.68 / 0.67, kron(Franz6,karate)
//    1.14 / 1.14 against 0.82 / 0.84, kron(bayer10,LF10) 1.27 / 1.26
//    against 0.89 / 0.88, Franz6 2.44 / 1.84 against 1.94 / 1.34); it loses
//    on the inputs with fewer rows (bcsstk13, dnn_n1024_l1, watt_2,
//    mbeacxc) and on kron(mbeacxc,LF10) (rows up to 2420: 0.53 / 0.79
//    against 0.70 / 0.85), where a row's walk is what the warps wait on.
//  - Tiles of 32 against 64 at N = 32 (same run): the same columns, but the
//    tile of 64's jammed second copy (never live at N = 32) costs registers:
//    on the inputs with at least 4096 rows 32 wins (kron(Pd,cage5) 1.74
//    against 1.18, kron(Franz6,karate) 1.96 against 1.36, bayer10 2.13
//    against 2.03); below, it ties or loses, and it loses on
//    kron(mbeacxc,LF10) (0.65 against 0.77), the one input with rows of
//    1024 or more that is not the split's.
//  - The split in shares of 16 (h100_split_shares.txt) on mbeacxc (492 rows
//    of 101 on average): 0.97 / 0.59 / 0.40 against the tiles of 64's
//    0.54 / 0.48 / 0.47, and on adder_dcop_05 (one row of 1310 among rows
//    of 6) 0.96 / 0.99 / 0.80 against the shares of 32's 0.73 / 0.85 / 0.72.
//  - The R-MAT graph (a row of 23401 among rows of 7.8, 8.2 M nonzeros,
//    h100_full_default.txt): the split (shares of 32) 0.63 / 0.29 / 0.27,
//    the tiles of 64 0.22 / 0.30 / 0.49: the row kernel's time is the
//    longest row's walk at every N, the split's grows with N (atomics, the
//    output zeroed). Even near N = 128, where nonzeros * N is about 45000
//    longest rows; the rule keeps the split below 32768.
#include "tcc/lowering/gpu_spmm_mappings.h"

#include <algorithm>
#include <stdexcept>

#include "tcc/ir/index_queries.h"
#include "tcc/lowering/gpu_default_mapping.h"
#include "tcc/lowering/gpu_kernels.h"
#include "gpu_input_rules.h"

namespace tcc::lowering {

namespace {

ScheduleCommand parallelize(const ir::IndexVar& var, ir::ParallelUnit unit) {
  std::string text = "parallelize(" + var.name() + ", " + ir::toString(unit) + ", " +
                     ir::toString(ir::OutputRaceStrategy::NoRaces) + ")";
  return {ParallelizeCommand{var, unit, ir::OutputRaceStrategy::NoRaces}, text};
}

ScheduleCommand split(const ir::IndexVar& var, const ir::IndexVar& outer, const ir::IndexVar& inner, int factor) {
  return {ir::SplitRelation{var, outer, inner, factor}, "split(" + var.name() + ", " + outer.name() + ", " +
                                                            inner.name() + ", " + std::to_string(factor) + ")"};
}

std::string columnsOfLane(int tile) {
  if (tile == 32) return "column l";
  std::string text = "columns l";
  for (int round = 1; round < tile / 32; ++round)
    text += (round + 1 == tile / 32 ? " and l + " : ", l + ") + std::to_string(32 * round);
  return text;
}

}  // namespace

std::vector<ScheduleCommand> columnTileMapping(const ir::IndexVar& rows, const ir::IndexVar& column,
                                               const std::vector<ir::IndexVar>& loopOrder,
                                               const std::set<ir::IndexVar>& sparseLevelVars, int tile,
                                               std::vector<std::string>& reasons) {
  const int rounds = tile / 32;
  ir::IndexVar tileVar(column.name() + "_tile"), inTile(column.name() + "_in"), lane(column.name() + "_lane"),
      round(column.name() + "_round"), warp(rows.name() + column.name() + "_warp");
  std::vector<ScheduleCommand> commands;
  std::vector<ir::IndexVar> order{rows, tileVar, lane};
  if (rounds > 1) {
    order.push_back(round);
    commands.push_back(split(column, tileVar, inTile, tile));
    commands.push_back(split(inTile, round, lane, 32));
  } else {
    commands.push_back(split(column, tileVar, lane, 32));
  }
  for (auto it = loopOrder.begin() + 1; it != loopOrder.end(); ++it)
    if (!(*it == column)) order.push_back(*it);
  std::string text = "reorder(";
  for (size_t k = 0; k < order.size(); ++k) text += (k ? ", " : "") + order[k].name();
  commands.push_back({ReorderCommand{order}, text + ")"});
  commands.push_back({ir::FuseRelation{rows, tileVar, warp},
                      "fuse(" + rows.name() + ", " + tileVar.name() + ", " + warp.name() + ")"});
  commands.push_back(parallelize(warp, ir::ParallelUnit::GPUWarp));
  commands.push_back(parallelize(lane, ir::ParallelUnit::GPUThread));
  if (rounds > 1)
    commands.push_back({UnrollCommand{round, rounds}, "unroll(" + round.name() + ", " + std::to_string(rounds) + ")"});
  // The walk over a row's nonzeros, unrolled: the loads of several
  // nonzeros (and of the B rows they pick) in flight at once.
  const ir::IndexVar& innermost = order.back();
  bool unrollNonzeros = sparseLevelVars.count(innermost) > 0;
  if (unrollNonzeros) commands.push_back({UnrollCommand{innermost, 4}, "unroll(" + innermost.name() + ", 4)"});
  reasons.push_back("default GPU mapping: the dense " + column.name() + " in tiles of " + std::to_string(tile) +
                    " columns, one warp per row " + rows.name() + " and tile; lane l owns the tile's " +
                    columnsOfLane(tile) +
                    (rounds > 1 ? ", summed together in one walk over the row's nonzeros (unroll and jam)" : "") +
                    (unrollNonzeros ? std::string(rounds > 1 ? ", that walk" : ", the walk over the row's nonzeros") +
                                          " unrolled by 4"
                                    : ""));
  return commands;
}

std::string toString(SpmmKernel kernel) {
  switch (kernel) {
    case SpmmKernel::Tiles32: return "tiles of 32";
    case SpmmKernel::Tiles64: return "tiles of 64";
    case SpmmKernel::Tiles128: return "tiles of 128";
    case SpmmKernel::Split16: return "nonzero split, shares of 16";
    case SpmmKernel::Split32: return "nonzero split, shares of 32";
    case SpmmKernel::OrderedSplit16: return "nonzero split in one order, shares of 16";
    case SpmmKernel::OrderedSplit32: return "nonzero split in one order, shares of 32";
  }
  return "";
}

int shareOf(SpmmKernel kernel) {
  switch (kernel) {
    case SpmmKernel::Split16: case SpmmKernel::OrderedSplit16: return 16;
    case SpmmKernel::Split32: case SpmmKernel::OrderedSplit32: return 32;
    default: return 0;
  }
}

bool isOrderedSplit(SpmmKernel kernel) {
  return kernel == SpmmKernel::OrderedSplit16 || kernel == SpmmKernel::OrderedSplit32;
}

namespace {

// The rule, written once: spmmKernelRule evaluates it, chooseSpmmKernel's
// host part computes it, explain prints it (gpu_input_rules.h). Each
// choice's outcome is its kernel's name. Under fp strict the splits are
// the ones in one order, on the same inputs: their scratch and second
// kernel cost little beside the walk of a long row they save.
rules::Rule splitRule(SpmmKernel shares16, SpmmKernel shares32) {
  using namespace rules;
  Rule rule("the SpMM kernel by {A}'s rows and {C}'s columns", toString(SpmmKernel::Tiles64));
  Condition skewed = rule.clause(balancedRowClause());
  // A long, skewed row whose walk outweighs the rest of the work.
  Condition longSplit =
      rule.clause("long_row_split", skewed && nonzeros * columns < kSplitWorkPerLongestRow * longestRow);
  Condition fewRows = rule.clause("few_long_rows",
                                  rows * columns <= kFewRowWork && nonzeros >= kLongMeanRow * rows && rows > 0);
  Condition manyShortRows = rows >= kManyRows && longestRow < kLongRowForOtherTiles;
  rule.choose(rule.clause("split_in_32s", longSplit && nonzeros > kSmallSplit), toString(shares32));
  rule.choose(rule.clause("split_in_16s", longSplit || fewRows), toString(shares16));
  rule.choose(rule.clause("tiles_of_32", manyShortRows && columns <= 32), toString(SpmmKernel::Tiles32));
  rule.choose(rule.clause("tiles_of_128", manyShortRows && columns > 64), toString(SpmmKernel::Tiles128));
  return rule;
}

const rules::Rule& spmmRule(NonzeroSplits splits) {
  static const rules::Rule tilesAlone = [] {
    using namespace rules;
    Rule rule("the SpMM kernel by {A}'s rows and {C}'s columns", toString(SpmmKernel::Tiles64));
    Condition manyShortRows = rows >= kManyRows && longestRow < kLongRowForOtherTiles;
    rule.choose(rule.clause("tiles_of_32", manyShortRows && columns <= 32), toString(SpmmKernel::Tiles32));
    rule.choose(rule.clause("tiles_of_128", manyShortRows && columns > 64), toString(SpmmKernel::Tiles128));
    return rule;
  }();
  static const rules::Rule atomic = splitRule(SpmmKernel::Split16, SpmmKernel::Split32);
  static const rules::Rule inOneOrder = splitRule(SpmmKernel::OrderedSplit16, SpmmKernel::OrderedSplit32);
  switch (splits) {
    case NonzeroSplits::None: return tilesAlone;
    case NonzeroSplits::Atomic: return atomic;
    case NonzeroSplits::InOneOrder: return inOneOrder;
  }
  return tilesAlone;
}

SpmmKernel kernelNamed(const std::string& name) {
  for (SpmmKernel kernel : {SpmmKernel::Tiles32, SpmmKernel::Tiles64, SpmmKernel::Tiles128, SpmmKernel::Split16,
                            SpmmKernel::Split32, SpmmKernel::OrderedSplit16, SpmmKernel::OrderedSplit32})
    if (toString(kernel) == name) return kernel;
  throw std::logic_error("the SpMM rule names no kernel '" + name + "'");
}

}  // namespace

SpmmKernel spmmKernelRule(const SpmmStatistics& m, NonzeroSplits splits) {
  const rules::Rule& rule = spmmRule(splits);
  return kernelNamed(rule.outcomeOf(rule.choose({m.rows, m.nonzeros, m.longestRow, m.columns})));
}

std::optional<SpmmMappings> spmmGpuMappings(const ir::IndexStmt& assignment,
                                            const std::vector<ir::IndexVar>& loopOrder, NonzeroSplits splits) {
  // The split's conditions are the SpMM's: a product of one CSR A(i, j),
  // i outermost, with dense operands, into a dense C(i, k).
  std::vector<std::string> reasons;
  auto split32 = nonzeroSplitGpuMapping(assignment, loopOrder, 32, reasons);
  if (!split32) return std::nullopt;
  const auto* node = assignment.as<ir::AssignmentNode>();
  SpmmMappings mappings;
  mappings.matrix = split32->matrix;
  mappings.output = node->lhs.tensor().name();
  const ir::IndexVar& rows = loopOrder[0];
  const ir::IndexVar& column = node->lhs.indices()[1];
  std::set<ir::IndexVar> sparseLevelVars;
  for (const auto& access : ir::accessesOf(node->rhs)) {
    const ir::Format& format = access.tensor().format();
    for (int level = 0; level < format.order(); ++level)
      if (!format.level(level).isDense()) sparseLevelVars.insert(access.indices()[format.modeOfLevel(level)]);
  }
  for (auto [kernel, tile] : {std::pair{SpmmKernel::Tiles32, 32}, std::pair{SpmmKernel::Tiles128, 128}}) {
    SpmmAlternative alternative{kernel, {}, {}};
    alternative.commands = columnTileMapping(rows, column, loopOrder, sparseLevelVars, tile, alternative.reasons);
    mappings.alternatives.push_back(std::move(alternative));
  }
  if (splits == NonzeroSplits::None) return mappings;
  const bool ordered = splits == NonzeroSplits::InOneOrder;
  SpmmAlternative split16{ordered ? SpmmKernel::OrderedSplit16 : SpmmKernel::Split16, {}, {}};
  auto sixteen = nonzeroSplitGpuMapping(assignment, loopOrder, 16, split16.reasons);
  split16.commands = sixteen->commands;
  SpmmAlternative shares32{ordered ? SpmmKernel::OrderedSplit32 : SpmmKernel::Split32, split32->commands, reasons};
  // (The split's own line says it adds atomically: the rewrite's replaces it.)
  for (SpmmAlternative* split : {&split16, &shares32})
    if (ordered)
      split->reasons = {
          "nonzero-split GPU mapping in one order (fp strict): " + mappings.matrix + "'s nonzeros in shares of " +
          std::to_string(shareOf(split->kernel)) + ", a warp per (share, tile of 32 " + column.name() +
          "), a column per lane, whatever rows they belong to; each lane sums a row's segment of its share in a "
          "register, in the order of the nonzeros, and stores it (no atomics): into " + mappings.output +
          " where the row starts in the share, else into the share's slot of a scratch array (shares x N, device "
          "memory); a second kernel, a warp per row and tile of 32 columns, adds onto each row that crosses "
          "shares the slots of the shares after its first, in share order, and zeroes the empty rows: the same "
          "order, and bits, every run"};
  mappings.alternatives.push_back(std::move(split16));
  mappings.alternatives.push_back(std::move(shares32));
  return mappings;
}

namespace {

const ir::imp::Stmt* bodyOf(const std::vector<LoweredSpmmKernel>& alternatives, SpmmKernel kernel) {
  for (const auto& alternative : alternatives)
    if (alternative.kernel == kernel) return &alternative.function.body;
  return nullptr;
}

}  // namespace

ir::imp::Function chooseSpmmKernel(const ir::imp::Function& tiles64, const std::vector<LoweredSpmmKernel>& alternatives,
                                   const std::string& matrix, const std::string& output) {
  namespace imp = ir::imp;
  const NonzeroSplits splits =
      bodyOf(alternatives, SpmmKernel::Split16) || bodyOf(alternatives, SpmmKernel::Split32) ? NonzeroSplits::Atomic
      : bodyOf(alternatives, SpmmKernel::OrderedSplit16) || bodyOf(alternatives, SpmmKernel::OrderedSplit32)
          ? NonzeroSplits::InOneOrder
          : NonzeroSplits::None;
  const rules::Rule& rule = spmmRule(splits);
  const rules::Inputs inputs{matrix, output};
  std::vector<imp::Stmt> body = rule.hostStatements(inputs);
  // Checked in the rule's order; where none holds, the tiles of 64.
  imp::Stmt chosen = tiles64.body;
  for (size_t choice = rule.choiceCount(); choice-- > 0;)
    if (const imp::Stmt* alternative = bodyOf(alternatives, kernelNamed(rule.outcomeOf(choice))))
      chosen = imp::If::make(rule.conditionOf(choice, inputs), *alternative, chosen);
  body.push_back(chosen);
  imp::Function result = tiles64;
  result.body = imp::Block::make(body);
  for (const auto& alternative : alternatives) keepDeviceBuffersOf(alternative.function, result);
  return result;
}

std::string spmmRuleText(const std::string& matrix, const std::string& output, NonzeroSplits splits) {
  return spmmRule(splits).text({matrix, output}) +
         (splits == NonzeroSplits::InOneOrder
              ? " (fp strict: the nonzero splits in one order, where fp fast takes the ones whose atomic additions "
                "come in another order each run)"
              : "");
}

}  // namespace tcc::lowering
