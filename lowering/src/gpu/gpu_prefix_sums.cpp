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

Expr int64Of(int64_t value) { return ops::IntImm::make(value, imp::Type::int64()); }

}  // namespace

std::vector<Stmt> Lowerer::gpuPrefixSums(const std::vector<Expr>& arrays, const Expr& counts,
                                         const std::string& what) {
  const imp::Type int64 = imp::Type::int64();
  std::vector<Stmt> stmts;
  Expr m = freshVar("scan_counts", int64);
  stmts.push_back(imp::Declare::make(m, ops::cast(int64, counts)));
  std::vector<std::string> names;
  for (const auto& array : arrays) names.push_back(array.as<imp::Var>()->name);
  std::vector<Stmt> frees;
  scanLevel(arrays, names, m, 0, what, stmts, frees);
  // (All at the end: the first free waits for the kernels, as the host's
  // read of the total right after would.)
  stmts.insert(stmts.end(), frees.begin(), frees.end());
  return stmts;
}

void Lowerer::scanLevel(const std::vector<Expr>& arrays, const std::vector<std::string>& names, const Expr& m,
                        int level, const std::string& what, std::vector<Stmt>& stmts, std::vector<Stmt>& frees) {
  const imp::Type int64 = imp::Type::int64();
  if (level == kGpuScanLevels || !options_.gpuParallelPrefixSums) {
    // The rest on one GPU thread (the host neither loops nor writes device memory).
    Expr k = freshVar("scan_k", int64);
    std::vector<Stmt> sums;
    for (const auto& array : arrays)
      sums.push_back(imp::Store::make(array, ops::add(k, int64Of(1)), imp::Load::make(array, k), true));
    Stmt serial = imp::For::make(k, int64Of(0), m, imp::Block::make(sums), imp::LoopKind::Serial,
                                 level == 0 ? what + " (prefix sum)" : "the tile totals' prefix sum");
    Expr thread = freshVar("thread", imp::Type::int32());
    stmts.push_back(imp::For::make(thread, ops::IntImm::make(0), ops::IntImm::make(1), serial,
                                   imp::LoopKind::GpuThread,
                                   level == 0 ? "the prefix sum of " + what + ", on one GPU thread"
                                              : "the prefix sum of the tile totals (level " + std::to_string(level) +
                                                    "), on one GPU thread"));
    return;
  }
  const Expr tile = int64Of(kGpuScanTile);
  Expr tiles = freshVar("scan_tiles", int64);
  stmts.push_back(imp::Declare::make(tiles, ops::div(ops::add(m, int64Of(kGpuScanTile - 1)), tile)));
  // Each array's tile totals: entry 0 zero, then tile t's total at t + 1.
  std::vector<Expr> totals;
  for (const auto& name : names) {
    Expr total = freshVar(name + "_totals" + std::to_string(level + 1), imp::Type::pointerTo(int64));
    totals.push_back(total);
    stmts.push_back(imp::Declare::make(total, Expr()));
    stmts.push_back(imp::Allocate::make(total, ops::add(tiles, int64Of(1)), true));
    gpuSharedWorkspaces_.push_back(total);  // (device memory the host allocates, zeroed, and frees)
  }
  // A thread per tile: its counts scanned in place, its total stored.
  Expr t = freshVar("scan_tile", int64);
  Expr first = freshVar("scan_first", int64), last = freshVar("scan_last", int64);
  std::vector<Stmt> body{imp::Declare::make(first, ops::mul(t, tile)),
                         imp::Declare::make(last, ops::min(ops::add(first, tile), m))};
  std::vector<Expr> running;
  for (const auto& name : names) {
    running.push_back(freshVar(name + "_running", int64));
    body.push_back(imp::Declare::make(running.back(), int64Of(0)));
  }
  Expr k = freshVar("scan_k", int64);
  std::vector<Stmt> step;
  for (size_t a = 0; a < arrays.size(); ++a) {
    Expr at = ops::add(k, int64Of(1));
    step.push_back(imp::Assign::makeCompound(ir::imp::BinaryOp::Add, running[a], imp::Load::make(arrays[a], at)));
    step.push_back(imp::Store::make(arrays[a], at, running[a]));
  }
  body.push_back(imp::For::make(k, first, last, imp::Block::make(step), imp::LoopKind::Serial, "the tile, in place"));
  for (size_t a = 0; a < arrays.size(); ++a)
    body.push_back(imp::Store::make(totals[a], ops::add(t, int64Of(1)), running[a]));
  stmts.push_back(imp::For::make(t, int64Of(0), tiles, imp::Block::make(body), imp::LoopKind::GpuThread,
                                 level == 0 ? "the prefix sum of " + what + ": each tile scanned by a GPU thread"
                                            : "the tile totals (level " + std::to_string(level) +
                                                  "): each tile scanned by a GPU thread"));
  Expr c = freshVar("scan_entry", int64);  // (named before the levels below name theirs)
  scanLevel(totals, names, tiles, level + 1, what, stmts, frees);
  // Every count past the first tile adds the totals of the tiles before.
  std::vector<Stmt> fixups;
  for (size_t a = 0; a < arrays.size(); ++a)
    fixups.push_back(imp::Store::make(arrays[a], ops::add(c, int64Of(1)),
                                      imp::Load::make(totals[a], ops::div(c, tile)), true));
  stmts.push_back(imp::For::make(c, tile, m, imp::Block::make(fixups), imp::LoopKind::GpuThread,
                                 level == 0 ? "the prefix sum of " + what + ": each entry adds the tiles before"
                                            : "the tile totals (level " + std::to_string(level) +
                                                  "): each adds the tiles before"));
  for (const auto& total : totals) frees.push_back(imp::Free::make(total));
}

}  // namespace tcc::lowering
