// Appending to an output level whose coordinate the loops revisit on
// consecutive iterations (OutputVisitOrder::repeatedLevels: the high part
// of a fused loop, say). Each such level keeps the coordinate of its last
// position and, below the first level, that position's parent; an
// iteration opens a position only when they differ, and otherwise writes
// to (or appends children under) the last one. The state is declared just
// outside the outermost loop that revisits the level, so each thread of a
// loop around it (rows assembled in parallel) has its own. Every assembly
// pass does the same: appending (Fused), assemble then compute, and rows
// counted then filled.
#include <algorithm>

#include "lowerer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

namespace {


}  // namespace

std::vector<Stmt> Lowerer::declareRepeatedLevels(const ir::ForallNode* forall,
                                                 std::vector<std::pair<ir::TensorVar, int>>& declared) {
  const ir::IndexVar& var = forall->indexVar;
  std::vector<Stmt> stmts;
  std::vector<ir::TensorVar> written;
  for (const auto& [level, loop] : visitOrder_.repeatedLevels) {
    if (!(loop == var) || repeatedLevels_.count(level) || level.first.format().level(level.second).isDense()) continue;
    // (A loop over the same variable elsewhere, a producer's, writes other tensors.)
    if (written.empty()) written = ir::tensorsWritten(forall->body);
    if (std::find(written.begin(), written.end(), level.first) == written.end()) continue;
    const TensorStorage& storage = storageOf(level.first);
    std::string prefix = storage.name + std::to_string(level.second + 1);
    RepeatedLevelState state;
    if (stmts.empty())
      stmts.push_back(imp::Comment::make("the last positions of output levels the loops over " + var.name() +
                                         " revisit on consecutive iterations (a new one when these change)"));
    state.lastCoordinate = freshVar(prefix + "_last", imp::Type::int32());
    stmts.push_back(imp::Declare::make(state.lastCoordinate, ops::IntImm::make(-1)));
    if (level.second > 0) {
      state.lastParent = freshVar(prefix + "_last_parent", imp::Type::int64());
      stmts.push_back(imp::Declare::make(state.lastParent, ops::int64Imm(-1)));
    }
    repeatedLevels_[level] = state;
    declared.push_back(level);
  }
  return stmts;
}

// Whether the coordinate is that of the level's last position, under the
// same parent position.
Expr Lowerer::revisits(const RepeatedLevelState& state, const Expr& coordinate, const Expr& parent) {
  Expr same = ops::eq(state.lastCoordinate, coordinate);
  return state.lastParent.defined() ? ops::land(ops::eq(state.lastParent, parent), same) : same;
}

std::vector<Stmt> Lowerer::repeatedLevelPrologue(const ir::AccessNode* lhs, int level, const Expr& coordinate,
                                                 bool accumulating, RepeatedLevelState& state) {
  TensorStorage& storage = storageOf(lhs->tensor);
  const ir::Format& format = lhs->tensor.format();
  Expr append = storage.appendPosition[level];
  Expr parent = level > 0 ? parentPosition(lhs, level) : ops::int64Imm(0);
  std::string prefix = "p" + storage.name + std::to_string(level + 1);
  if (level == format.order() - 1) {
    // A new position only for a new coordinate; the body then writes at
    // the last position, new or revisited.
    std::vector<Stmt> open;
    bool reserved = reservedOutputs_.count(lhs->tensor) > 0;
    if ((pass_ == OutputPass::Fused || pass_ == OutputPass::Chunk) && !reserved)
      open.push_back(
          growToHold(storage.crdCapacity[level], ops::add(append, ops::int64Imm(1)), {storage.crd[level], storage.vals}));
    if (pass_ == OutputPass::Assemble && !reserved)
      open.push_back(growToHold(storage.crdCapacity[level], ops::add(append, ops::int64Imm(1)), {storage.crd[level]}));
    if (writesCoordinates(pass_))
      open.push_back(imp::Store::make(storage.crd[level], append, coordinate, false, false,
                                      streamsAppendsTo(lhs->tensor)));
    if (accumulating && writesValues(pass_))
      open.push_back(
          imp::Store::make(storage.vals, append, ops::cast(valueType(lhs->tensor), ops::FloatImm::make(0.0))));
    open.push_back(imp::Assign::makeCompound(imp::BinaryOp::Add, append, ops::int64Imm(1)));
    open.push_back(imp::Assign::make(state.lastCoordinate, coordinate));
    if (state.lastParent.defined()) open.push_back(imp::Assign::make(state.lastParent, parent));
    Expr position = freshVar(prefix + "_at", imp::Type::int64());
    positions_[lhs][level] = position;
    Expr opens = imp::Unary::make(imp::UnaryOp::Not, revisits(state, coordinate, parent));
    return {imp::If::make(opens, imp::Block::make(open)),
            imp::Declare::make(position, ops::sub(append, ops::int64Imm(1)))};
  }
  // The position this coordinate has (revisited) or gets if its segment
  // below receives entries.
  state.same = freshVar(prefix + "_revisited", imp::Type::bool_());
  Expr position = freshVar(prefix + "_at", imp::Type::int64());
  positions_[lhs][level] = position;
  Expr begin = freshVar("p" + storage.name + std::to_string(level + 2) + "_begin", imp::Type::int64());
  segmentBegins_[{lhs, level}] = begin;
  return {imp::Declare::make(state.same, revisits(state, coordinate, parent)),
          imp::Declare::make(position, imp::Select::make(state.same, ops::sub(append, ops::int64Imm(1)), append)),
          imp::Declare::make(begin, storage.appendPosition[level + 1])};
}

std::vector<Stmt> Lowerer::repeatedLevelEpilogue(const ir::AccessNode* lhs, int level, const Expr& coordinate,
                                                 const RepeatedLevelState& state) {
  TensorStorage& storage = storageOf(lhs->tensor);
  if (level == lhs->tensor.format().order() - 1) return {};  // opened by the prologue
  Expr append = storage.appendPosition[level];
  Expr childAppend = storage.appendPosition[level + 1];
  Expr parent = level > 0 ? parentPosition(lhs, level) : ops::int64Imm(0);
  // Record a new coordinate once its segment below received entries; a
  // revisited one only moves its segment's end.
  std::vector<Stmt> record;
  if (writesCoordinates(pass_)) {
    record.push_back(growToHold(storage.crdCapacity[level], ops::add(append, ops::int64Imm(1)), {storage.crd[level]}));
    record.push_back(imp::Store::make(storage.crd[level], append, coordinate));
  }
  record.push_back(imp::Assign::makeCompound(imp::BinaryOp::Add, append, ops::int64Imm(1)));
  record.push_back(imp::Assign::make(state.lastCoordinate, coordinate));
  if (state.lastParent.defined()) record.push_back(imp::Assign::make(state.lastParent, parent));
  std::vector<Stmt> nonEmpty{imp::If::make(imp::Unary::make(imp::UnaryOp::Not, state.same), imp::Block::make(record))};
  if (pass_ != OutputPass::Compute) {
    nonEmpty.push_back(
        growToHold(storage.posCapacity[level + 1], ops::add(append, ops::int64Imm(1)), {storage.pos[level + 1]}));
    nonEmpty.push_back(imp::Store::make(storage.pos[level + 1], append, childAppend));
  }
  return {imp::If::make(ops::gt(childAppend, segmentBegins_.at({lhs, level})), imp::Block::make(nonEmpty))};
}

}  // namespace tcc::lowering
