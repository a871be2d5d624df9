// Every schedule command of the DSL with its parameters. Names and argument
// order follow TACO where TACO has the command.
#include "tcc/frontend/schedule.h"

namespace tcc::frontend {
namespace {

using Kind = ScheduleParameterKind;

ScheduleParameter index(std::string name = "index") { return {std::move(name), Kind::IndexVariable, {}}; }
ScheduleParameter fresh(std::string name) { return {std::move(name), Kind::NewIndexVariable, {}}; }
ScheduleParameter integer(std::string name) { return {std::move(name), Kind::Integer, {}}; }
ScheduleParameter choice(std::string name, std::vector<std::string> choices) {
  return {std::move(name), Kind::Choice, std::move(choices)};
}

const std::vector<std::string> kParallelUnits = {"NotParallel", "DefaultUnit", "CPUThread",
                                                 "CPUVector",   "GPUBlock",    "GPUWarp",
                                                 "GPUThread"};
const std::vector<std::string> kRaceStrategies = {"IgnoreRaces", "NoRaces", "Atomics",
                                                  "Temporary", "ParallelReduction", "Workspace"};
const std::vector<std::string> kBoundKinds = {"MinExact", "MinConstraint", "MaxExact",
                                              "MaxConstraint"};
const std::vector<std::string> kOnOff = {"on", "off"};

std::vector<ScheduleCommandSpec> makeTable() {
  std::vector<ScheduleCommandSpec> table;
  table.push_back({"reorder", {index(), index()}, {}, true, {}, "reorder(index, index, ...)"});
  table.push_back({"split", {index(), fresh("outer index"), fresh("inner index"), integer("factor")},
                   {}, false, {}, "split(index, outer, inner, factor)"});
  table.push_back({"divide", {index(), fresh("outer index"), fresh("inner index"), integer("parts")},
                   {}, false, {}, "divide(index, outer, inner, parts)"});
  table.push_back({"fuse", {index("outer index"), index("inner index"), fresh("fused index")}, {},
                   false, {}, "fuse(outer, inner, fused)"});
  table.push_back({"pos", {index(), fresh("position index"), {"access", Kind::Access, {}}}, {},
                   false, {}, "pos(index, position index, access)"});
  // precompute(expr, i, iw) into a dense workspace over one index, or
  // precompute(expr, i_vars, o_vars, W) into a workspace tensor W declared
  // in a sparse_workspace(...) format (index lists written {i, j}).
  table.push_back({"precompute",
                   {{"expression", Kind::Expression, {}}, {"index or indices", Kind::IndexVariables, {}},
                    {"workspace index or indices", Kind::IndexVariablesOrNew, {}}},
                   {{"workspace", Kind::Workspace, {}}}, false, {},
                   "precompute(expression, index, workspace index) or precompute(expression, {i_vars}, {o_vars}, "
                   "workspace)"});
  table.push_back({"parallelize",
                   {index(), choice("parallel unit", kParallelUnits),
                    choice("race strategy", kRaceStrategies)},
                   {}, false, {}, "parallelize(index, unit, race strategy)"});
  table.push_back({"bound",
                   {index(), fresh("bound index"), integer("bound"), choice("bound kind", kBoundKinds)},
                   {}, false, {}, "bound(index, bound index, bound, kind)"});
  table.push_back({"unroll", {index(), integer("factor")}, {}, false, {}, "unroll(index, factor)"});
  table.push_back({"sparse_workspace", {}, {index()}, false,
                   {{"policy", false, {}} /* built-in or registered: checked when applied */, {"pipeline", false, kOnOff},
                    {"double_buffer", false, kOnOff}, {"capacity", true, {}}},
                   "sparse_workspace([index], policy = bucket|hash|coord|map|vector|REGISTERED, pipeline = on|off, "
                   "double_buffer = on|off, capacity = N)"});
  table.push_back({"dense_workspace", {}, {index()}, false, {}, "dense_workspace([index])"});
  table.push_back({"gpu_block", {index()}, {choice("race strategy", kRaceStrategies)}, false, {},
                   "gpu_block(index, [race strategy])"});
  table.push_back({"gpu_warp", {index()}, {choice("race strategy", kRaceStrategies)}, false, {},
                   "gpu_warp(index, [race strategy])"});
  table.push_back({"gpu_thread", {index()}, {choice("race strategy", kRaceStrategies)}, false, {},
                   "gpu_thread(index, [race strategy])"});
  table.push_back({"tensorcore", {}, {}, false,
                   {{"m", true, {}}, {"n", true, {}}, {"k", true, {}}},
                   "tensorcore([m = M], [n = N], [k = K])"});
  table.push_back({"assemble", {{"tensor", Kind::Tensor, {}}, choice("strategy", {"Append", "Insert"})},
                   {choice("separately schedulable", {"true", "false"})}, false, {},
                   "assemble(tensor, Append|Insert, [true|false])"});
  return table;
}

}  // namespace

const std::vector<ScheduleCommandSpec>& scheduleCommandTable() {
  static const std::vector<ScheduleCommandSpec> table = makeTable();
  return table;
}

const ScheduleCommandSpec* findScheduleCommand(const std::string& name) {
  for (const ScheduleCommandSpec& spec : scheduleCommandTable())
    if (spec.name == name) return &spec;
  return nullptr;
}

}  // namespace tcc::frontend
