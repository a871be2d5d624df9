// The prefix sums of a sparse output's counts on the GPU (the rows of a
// CSR output, the coordinates of a DCSR one): between the kernel that
// counts and the kernel that fills, each array's counts become offsets.
//
// Reduce-then-scan over tiles, as plain GPU loops: each GPU thread scans a
// tile of kGpuScanTile consecutive counts in place and stores the tile's
// total; the totals are scanned the same way (kGpuScanLevels levels, the
// last on one thread); then every count past the first tile adds the
// totals of the tiles before its own.
// Why not a shared-memory block scan or decoupled look-back: the loop IR has neither shared memory nor barriers, and plain GPU loops run unchanged in every backend (.cu launcher, NVRTC, the serial CPU check).
// Any length is right, 0 and 1 included: a level of m counts has
// ceil(m / tile) tiles, and the last level scans whatever is left.
// What a call costs besides the kernels is kept small, as small outputs
// feel it: every level's totals of every array live in one device array
// (one allocation, one free, no zeroing), and a level of one tile ends the
// scan (the levels below count nothing and launch no kernel).
#include "../lowerer.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

namespace {

// 128 counts a thread: a warp's threads each walk a line of 16 int64s at a
// time; three levels leave the last one at most 2^31 / 2^21 = 1024 counts.
constexpr int64_t kGpuScanTile = 128;
constexpr int kGpuScanLevels = 3;


}  // namespace

std::vector<Stmt> Lowerer::gpuPrefixSums(const std::vector<Expr>& arrays, const Expr& counts,
                                         const std::string& what) {
  const imp::Type int64 = imp::Type::int64();
  std::vector<Stmt> stmts;
  Expr m = freshVar("scan_counts", int64);
  stmts.push_back(imp::Declare::make(m, ops::cast(int64, counts)));
  std::vector<std::string> names;
  for (const auto& array : arrays) names.push_back(array.as<imp::Var>()->name);
  std::vector<GpuScanArray> scanned;
  for (const auto& array : arrays) scanned.push_back({array, Expr()});
  if (!options_.gpuParallelPrefixSums) {
    scanSerially(scanned, m, 0, what, stmts);
    return stmts;
  }
  // Every level's tile totals, of every array, in one device array of the
  // call: one allocation (and one free) whatever the levels and arrays, and
  // none of it zeroed, as no entry is read before it is written (a level's
  // entry 0 is never read: the fixups read the totals from entry 1 on, the
  // next level scans entries 1.., and the last level's serial sum starts
  // at entry 1).
  // counts[l]: the entries level l scans. A level of one tile is done by
  // its tile scan alone (no entry has tiles before it): the levels below
  // then scan nothing, and launch no kernel.
  std::vector<Expr> tiles, levelCounts{m};
  for (int level = 0; level < kGpuScanLevels; ++level) {
    tiles.push_back(freshVar("scan_tiles", int64));
    stmts.push_back(imp::Declare::make(
        tiles.back(), ops::div(ops::add(levelCounts.back(), ops::int64Imm(kGpuScanTile - 1)), ops::int64Imm(kGpuScanTile))));
    levelCounts.push_back(freshVar("scan_counts", int64));
    stmts.push_back(imp::Declare::make(
        levelCounts.back(), imp::Select::make(ops::gt(tiles.back(), ops::int64Imm(1)), tiles.back(), ops::int64Imm(0))));
  }
  Expr buffer = freshVar(names.front() + "_tile_totals", imp::Type::pointerTo(int64));
  // Level l's totals of each array: tiles[l] + 1 entries from its own offset.
  std::vector<std::vector<GpuScanArray>> totals(kGpuScanLevels);
  Expr used;  // entries taken so far (undefined: none)
  for (int level = 0; level < kGpuScanLevels; ++level)
    for (const auto& name : names) {
      Expr offset;
      if (used.defined()) {
        offset = freshVar(name + "_totals" + std::to_string(level + 1) + "_offset", int64);
        stmts.push_back(imp::Declare::make(offset, used));
      }
      totals[level].push_back({buffer, offset});
      Expr size = ops::add(tiles[level], ops::int64Imm(1));
      used = offset.defined() ? ops::add(offset, size) : size;
    }
  stmts.push_back(imp::Declare::make(buffer, Expr()));
  stmts.push_back(imp::Allocate::make(buffer, used, false));
  gpuSharedWorkspaces_.push_back(buffer);  // (device memory the host allocates and frees)
  scanLevels(scanned, names, totals, tiles, levelCounts, 0, what, stmts);
  // (After the kernels: the free waits for them, as the host's read of the
  // total right after would.)
  stmts.push_back(imp::Free::make(buffer));
  return stmts;
}

namespace {

// Entry `index` of a scanned array.
Expr entryOf(const GpuScanArray& array, const Expr& index) {
  return array.offset.defined() ? ops::add(array.offset, index) : index;
}

}  // namespace

void Lowerer::scanSerially(const std::vector<GpuScanArray>& arrays, const Expr& m, int level, const std::string& what,
                           std::vector<Stmt>& stmts) {
  // The rest on one GPU thread (the host neither loops nor writes device
  // memory): entries 1..m summed in place (entry 0 is zero, or, for the
  // tile totals, never written: entry 1 is its own sum).
  const imp::Type int64 = imp::Type::int64();
  Expr k = freshVar("scan_k", int64);
  std::vector<Stmt> sums;
  for (const auto& array : arrays)
    sums.push_back(imp::Store::make(array.buffer, entryOf(array, ops::add(k, ops::int64Imm(1))),
                                    imp::Load::make(array.buffer, entryOf(array, k)), true));
  Stmt serial = imp::For::make(k, ops::int64Imm(level == 0 ? 0 : 1), m, imp::Block::make(sums), imp::LoopKind::Serial,
                               level == 0 ? what + " (prefix sum)" : "the tile totals' prefix sum");
  Expr thread = freshVar("thread", imp::Type::int32());
  // (Tile totals of one entry are their own sum: no launch.)
  Expr threads = level == 0 ? ops::IntImm::make(1)
                            : imp::Select::make(ops::gt(m, ops::int64Imm(1)), ops::IntImm::make(1), ops::IntImm::make(0));
  stmts.push_back(imp::For::make(thread, ops::IntImm::make(0), threads, serial, imp::LoopKind::GpuThread,
                                 level == 0 ? "the prefix sum of " + what + ", on one GPU thread"
                                            : "the prefix sum of the tile totals (level " + std::to_string(level) +
                                                  "), on one GPU thread"));
}

void Lowerer::scanLevels(const std::vector<GpuScanArray>& arrays, const std::vector<std::string>& names,
                         const std::vector<std::vector<GpuScanArray>>& allTotals,
                         const std::vector<Expr>& tilesOfLevels, const std::vector<Expr>& countsOfLevels, int level,
                         const std::string& what, std::vector<Stmt>& stmts) {
  const imp::Type int64 = imp::Type::int64();
  const Expr& m = countsOfLevels[level];
  if (level == kGpuScanLevels) {
    scanSerially(arrays, m, level, what, stmts);
    return;
  }
  const Expr tile = ops::int64Imm(kGpuScanTile);
  const Expr& tiles = tilesOfLevels[level];
  // Each array's tile totals: tile t's total at entry t + 1.
  const std::vector<GpuScanArray>& totals = allTotals[level];
  // A thread per tile: its counts scanned in place, its total stored.
  Expr t = freshVar("scan_tile", int64);
  Expr first = freshVar("scan_first", int64), last = freshVar("scan_last", int64);
  std::vector<Stmt> body{imp::Declare::make(first, ops::mul(t, tile)),
                         imp::Declare::make(last, ops::min(ops::add(first, tile), m))};
  std::vector<Expr> running;
  for (const auto& name : names) {
    running.push_back(freshVar(name + "_running", int64));
    body.push_back(imp::Declare::make(running.back(), ops::int64Imm(0)));
  }
  Expr k = freshVar("scan_k", int64);
  std::vector<Stmt> step;
  for (size_t a = 0; a < arrays.size(); ++a) {
    Expr at = entryOf(arrays[a], ops::add(k, ops::int64Imm(1)));
    step.push_back(
        imp::Assign::makeCompound(ir::imp::BinaryOp::Add, running[a], imp::Load::make(arrays[a].buffer, at)));
    step.push_back(imp::Store::make(arrays[a].buffer, at, running[a]));
  }
  body.push_back(imp::For::make(k, first, last, imp::Block::make(step), imp::LoopKind::Serial, "the tile, in place"));
  for (size_t a = 0; a < arrays.size(); ++a)
    body.push_back(imp::Store::make(totals[a].buffer, entryOf(totals[a], ops::add(t, ops::int64Imm(1))), running[a]));
  stmts.push_back(imp::For::make(t, ops::int64Imm(0), tiles, imp::Block::make(body), imp::LoopKind::GpuThread,
                                 level == 0 ? "the prefix sum of " + what + ": each tile scanned by a GPU thread"
                                            : "the tile totals (level " + std::to_string(level) +
                                                  "): each tile scanned by a GPU thread"));
  Expr c = freshVar("scan_entry", int64);  // (named before the levels below name theirs)
  scanLevels(totals, names, allTotals, tilesOfLevels, countsOfLevels, level + 1, what, stmts);
  // Every count past the first tile adds the totals of the tiles before.
  std::vector<Stmt> fixups;
  for (size_t a = 0; a < arrays.size(); ++a)
    fixups.push_back(imp::Store::make(arrays[a].buffer, entryOf(arrays[a], ops::add(c, ops::int64Imm(1))),
                                      imp::Load::make(totals[a].buffer, entryOf(totals[a], ops::div(c, tile))), true));
  stmts.push_back(imp::For::make(c, tile, m, imp::Block::make(fixups), imp::LoopKind::GpuThread,
                                 level == 0 ? "the prefix sum of " + what + ": each entry adds the tiles before"
                                            : "the tile totals (level " + std::to_string(level) +
                                                  "): each adds the tiles before"));
}

}  // namespace tcc::lowering
