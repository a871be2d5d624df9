// The nonzero split in one order (fp strict; see orderedSplitSums in
// gpu_spmm_mappings.h): the split's function as the lowering made it, its
// share walk's atomic additions replaced by a register sum per row segment
// stored without atomics, and a second GPU loop that adds each crossing
// row's slots in share order. Both are plain loops of the IR, so every
// backend and the serial CPU check run what the GPU runs.
//
// Why the order is fixed: in the share walk each lane owns one column k of
// its share and visits the share's nonzeros in position order, so each
// segment (the nonzeros of one row within one share) is summed from zero
// in that order. A row whose nonzeros lie within one share is stored
// whole. A row crossing shares s0 < ... < s1 starts in s0 (stored into the
// output, which no other share writes in this pass: the other shares hold
// it as their first segment, which goes to their slots) and the second
// GPU loop, after the first (a kernel boundary), adds the slots of s0 + 1
// .. s1 in that order. No value depends on which warp ran first.
#include <optional>
#include <string>

#include "tcc/ir/imperative_ops.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/lowering/gpu_spmm_mappings.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

const Type kInt64 = Type::int64();
// A long row's walk over its later shares' slots, unrolled: that many
// loads in flight before their additions, which stay in share order.
constexpr int kSlotLoadsInFlight = 8;

// The serial walk over a share's nonzeros: the loop, its one atomic
// addition into the output, and the row cursor the fused position's
// search sets (tcc_segment_of(pos, rows, position)).
struct ShareWalk {
  const For* loop = nullptr;
  const Store* store = nullptr;
  Expr row, position;
};

class StoresIn : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Store* op) override {
    IRVisitor::visit(op);
    ++stores;
    if (op->atomic && op->accumulate) atomic = op;
  }
  void visit(const For* op) override {
    IRVisitor::visit(op);
    if (op->loopKind != LoopKind::Serial) parallelInside = true;
  }
  void visit(const Assign* op) override {
    IRVisitor::visit(op);
    if (const auto* call = op->value.as<Call>(); call && call->name == "tcc_segment_of" && call->args.size() == 3) {
      row = op->var;
      position = call->args[2];
    }
  }
  int stores = 0;
  const Store* atomic = nullptr;
  bool parallelInside = false;
  Expr row, position;
};

class FindShareWalk : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const For* op) override {
    if (walk.loop) return;
    if (op->loopKind == LoopKind::Serial) {
      StoresIn stores;
      op->body.accept(stores);
      if (stores.atomic && stores.stores == 1 && !stores.parallelInside && stores.row.defined() &&
          stores.position.as<Var>()) {
        walk = {op, stores.atomic, stores.row, stores.position};
        return;
      }
    }
    IRVisitor::visit(op);
  }
  ShareWalk walk;
};

bool contains(const Stmt& stmt, const For* loop) {
  struct Finder : IRVisitor {
    using IRVisitor::visit;
    const For* target = nullptr;
    bool found = false;
    void visit(const For* op) override {
      found = found || op == target;
      IRVisitor::visit(op);
    }
  } finder;
  finder.target = loop;
  stmt.accept(finder);
  return finder.found;
}

// The names and values the two passes share.
struct Slots {
  Expr buffer;        // shares x N entries of the output's type
  Expr pos, columns;  // A's row positions (a host variable), the output's N (int64)
  // The host's values the variables above and `rows` are declared with
  // (a kernel reads host variables: a tensor field read in two kernels
  // would be declared twice in one scope).
  Expr posField, columnsField, rows, rowsField;
  Expr base;          // the first position (where share 0 starts)
  int share;
  Expr slotOf(const Expr& shareIndex, const Expr& column) const {
    return add(mul(shareIndex, columns), column);
  }
  Expr shareOf(const Expr& position) const { return div(sub(position, base), int64Imm(share)); }
};

// The share walk with its atomic addition replaced: a register sum per
// row segment, stored when the row changes and after the walk.
class SumSegments : public IRMutator {
 public:
  SumSegments(const ShareWalk& walk, const Slots& slots) : walk_(walk), slots_(slots) {}
  using IRMutator::visit;
  Stmt visit(const For* op, const Stmt& self) override {
    if (op != walk_.loop) return IRMutator::visit(op, self);
    const Type type = walk_.store->value.type();
    sum_ = Var::make("tcc_segment_sum", type);
    at_ = Var::make("tcc_segment_at", kInt64);
    row_ = Var::make("tcc_segment_row", kInt64);
    start_ = Var::make("tcc_segment_start", kInt64);
    Stmt body = IRMutator::mutate(op->body);
    Stmt walk = For::make(op->var, op->begin, op->end, body, op->loopKind, op->comment, op->unrollFactor,
                          op->reductions, op->parallelChunk);
    return Block::make({Declare::make(sum_, zero(type)), Declare::make(at_, int64Imm(-1)),
                        Declare::make(row_, int64Imm(-1)), Declare::make(start_, int64Imm(-1)), walk, flush()});
  }
  Stmt visit(const Store* op, const Stmt& self) override {
    if (op != walk_.store) return self;
    Expr index = Var::make("tcc_segment_now", kInt64);
    Stmt change = If::make(ne(index, at_), Block::make({flush(), Assign::make(sum_, zero(sum_.type())),
                                                       Assign::make(at_, index), Assign::make(row_, cast(kInt64, walk_.row)),
                                                       Assign::make(start_, cast(kInt64, walk_.position))}));
    return Block::make({Declare::make(index, cast(kInt64, op->index)), change,
                        Assign::makeCompound(BinaryOp::Add, sum_, op->value)});
  }

 private:
  static Expr zero(Type type) { return type.isFloat() ? FloatImm::make(0.0, type) : IntImm::make(0, type); }
  // A segment whose row started in an earlier share goes to this share's
  // slot; one whose row starts here, into the output.
  Stmt flush() const {
    Expr startedBefore = lt(Load::make(slots_.pos, row_), start_);
    Expr column = sub(at_, mul(row_, slots_.columns));
    Stmt toSlot = Store::make(slots_.buffer, slots_.slotOf(slots_.shareOf(start_), column), sum_);
    Stmt toOutput = Store::make(walk_.store->buffer, at_, sum_);
    return If::make(ge(at_, int64Imm(0)), If::make(startedBefore, toSlot, toOutput));
  }
  const ShareWalk& walk_;
  const Slots& slots_;
  Expr sum_, at_, row_, start_;
};

// The second pass: a warp per (row, tile of 32 columns), a lane a column;
// a row crossing shares s0 < s1 adds the slots of s0 + 1 .. s1 onto its
// entry, in share order.
Stmt addSlotsInShareOrder(const Slots& slots, const Expr& output, const Expr& rows) {
  const Type type = output.type().element();
  Expr tiles = Var::make("tcc_slot_tiles", kInt64);
  Expr warp = Var::make("tcc_slot_warp", kInt64), lane = Var::make("tcc_slot_lane", kInt64);
  Expr row = Var::make("tcc_slot_row", kInt64), column = Var::make("tcc_slot_column", kInt64);
  Expr first = Var::make("tcc_slot_first", kInt64), last = Var::make("tcc_slot_last", kInt64);
  Expr entry = Var::make("tcc_slot_entry", kInt64), sum = Var::make("tcc_slot_sum", type);
  Expr t = Var::make("tcc_slot_share", kInt64);
  Stmt later = For::make(t, add(first, int64Imm(1)), add(last, int64Imm(1)),
                       Assign::makeCompound(BinaryOp::Add, sum, Load::make(slots.buffer, slots.slotOf(t, column))),
                       LoopKind::Serial, "the row's later shares, in order", kSlotLoadsInFlight);
  Stmt crossing = Block::make({Declare::make(entry, add(mul(row, slots.columns), column)),
                               Declare::make(sum, Load::make(output, entry)), later, Store::make(output, entry, sum)});
  Expr begin = Var::make("tcc_slot_begin", kInt64), end = Var::make("tcc_slot_end", kInt64);
  // An empty row is zeroed here, so that the split writes every entry of
  // the output and needs it zeroed by no one.
  Stmt empty = Store::make(output, add(mul(row, slots.columns), column),
                           type.isFloat() ? FloatImm::make(0.0, type) : IntImm::make(0, type));
  Stmt body = Block::make(
      {Declare::make(row, div(warp, tiles)), Declare::make(column, add(mul(mod(warp, tiles), int64Imm(32)), lane)),
       If::make(lt(column, slots.columns),
                Block::make({Declare::make(begin, Load::make(slots.pos, row)),
                             Declare::make(end, Load::make(slots.pos, add(row, int64Imm(1)))),
                             If::make(lt(begin, end),
                                      Block::make({Declare::make(first, slots.shareOf(begin)),
                                                   Declare::make(last, slots.shareOf(sub(end, int64Imm(1)))),
                                                   If::make(lt(first, last), crossing)}),
                                      empty)}))});
  Stmt lanes = For::make(lane, int64Imm(0), int64Imm(32), body, LoopKind::GpuThread, "a column of the tile a lane");
  return Block::make(
      {Declare::make(tiles, div(add(slots.columns, int64Imm(31)), int64Imm(32))),
       For::make(warp, int64Imm(0), mul(rows, tiles), lanes, LoopKind::GpuWarp,
                 "the rows that cross shares: the slots of their later shares, in share order, a warp per row and "
                 "tile of 32 columns")});
}

// The outermost GPU loop holding the share walk, with the slots allocated
// before it and the second pass and the free after it.
class Rewrite : public IRMutator {
 public:
  Rewrite(const ShareWalk& walk, Slots& slots, Expr rows, Expr shares)
      : walk_(walk), slots_(slots), rows_(std::move(rows)), shares_(std::move(shares)) {}
  using IRMutator::visit;
  Stmt visit(const For* op, const Stmt& self) override {
    if (!isGpuLoop(op->loopKind) || !contains(self, walk_.loop)) return IRMutator::visit(op, self);
    done = true;
    Stmt walked = SumSegments(walk_, slots_).mutate(self);
    Expr count = max(mul(shares_, slots_.columns), int64Imm(1));
    return Block::make({Declare::make(slots_.pos, slots_.posField), Declare::make(slots_.columns, slots_.columnsField),
                        Declare::make(slots_.rows, slots_.rowsField),
                        Declare::make(slots_.base, Load::make(slots_.pos, int64Imm(0))),
                        Declare::make(slots_.buffer, Expr()), Allocate::make(slots_.buffer, count, false), walked,
                        addSlotsInShareOrder(slots_, walk_.store->buffer, rows_),
                        Free::make(slots_.buffer)});
  }
  bool done = false;

 private:
  const ShareWalk& walk_;
  Slots& slots_;
  Expr rows_, shares_;
};

}  // namespace

std::optional<Function> orderedSplitSums(const Function& split, const std::string& matrix, const std::string& output,
                                         int share) {
  FindShareWalk find;
  split.body.accept(find);
  const ShareWalk& walk = find.walk;
  if (!walk.loop) return std::nullopt;
  const std::string suffix = std::to_string(share);
  Slots slots;
  slots.buffer = Var::make(output + "_share_slots" + suffix, walk.store->buffer.type());
  slots.posField = TensorProperty::make(matrix, TensorField::Pos, 1, Type::pointerTo(kInt64));
  slots.pos = Var::make(matrix + "_row_positions" + suffix, Type::pointerTo(kInt64));
  slots.columnsField = cast(kInt64, TensorProperty::make(output, TensorField::Dim, 1, Type::int32()));
  slots.columns = Var::make(output + "_slot_columns" + suffix, kInt64);
  slots.rowsField = cast(kInt64, TensorProperty::make(matrix, TensorField::Dim, 0, Type::int32()));
  slots.rows = Var::make(matrix + "_slot_rows" + suffix, kInt64);
  slots.base = Var::make(matrix + "_first_position" + suffix, kInt64);
  slots.share = share;
  Expr nonzeros = sub(Load::make(slots.pos, slots.rows), slots.base);
  Expr shares = div(add(nonzeros, int64Imm(share - 1)), int64Imm(share));
  Rewrite rewrite(walk, slots, slots.rows, shares);
  Function result = split;
  result.body = rewrite.mutate(split.body);
  if (!rewrite.done) return std::nullopt;
  result.gpuSharedWorkspaces.push_back(slots.buffer);
  return result;
}

}  // namespace tcc::lowering
