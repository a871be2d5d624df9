// The GPU mapping a statement gets on the cuda target when its schedule
// parallelizes no loop (TACO's hand-written GPU schedules, chosen
// automatically):
//
//  - When a loop below the outermost one (i) iterates a sparse level, the
//    statement is row-like (CSR SpMV, SpMM). If a further loop d indexes
//    only dense inputs and the output (SpMM's k), d is split into tiles of
//    64 and each (row, tile) goes to a warp: split(d, d_tile, d_in, 64),
//    split(d_in, d_round, d_lane, 32), reorder(i, d_tile, d_lane,
//    d_round, ...), fuse(i, d_tile, id_warp), parallelize(id_warp,
//    GPUWarp, NoRaces), parallelize(d_lane, GPUThread, NoRaces),
//    unroll(d_round, 2) and unroll(j, 4) for the walk over the nonzeros.
//    Lane l sums columns l and l + 32 of its tile in one walk over the
//    row's nonzeros (the CUDA backend's unroll-and-jam).
//    Otherwise each row goes to a warp (parallelize(i, GPUWarp, NoRaces))
//    whose lanes split the loop right below i, and when that loop is
//    summed they add their partial sums with warp shuffles
//    (parallelize(j, GPUThread, ParallelReduction)).
//  - Otherwise each iteration of the outermost loop goes to a thread
//    (parallelize(i, GPUThread, NoRaces)).
//
// Rows against nonzeros, per matrix. A row-like statement whose two
// outermost loops walk a CSR matrix A (i its dense rows, j its compressed
// columns) also gets a second mapping that splits A's nonzeros evenly,
// whatever rows they belong to (TACO's nonzero-split GPU schedules):
//    SpMV: fuse(i, j, f), pos(f, fpos, A(i, j)), split(fpos, f_thread,
//    f_in, 16), parallelize(f_thread, GPUThread, Atomics), unroll(f_in, 4);
//    SpMM: reorder(i, j, k), fuse(i, j, f), pos(f, fpos, A(i, j)),
//    split(fpos, f_warp, f_in, 128), split(k, k_tile, k_lane, 32),
//    reorder(f_warp, k_tile, k_lane, f_in), fuse(f_warp, k_tile, wk),
//    parallelize(wk, GPUWarp, Atomics), parallelize(k_lane, GPUThread,
//    Atomics), unroll(f_in, 4).
// Both are lowered by the one lowering into one host part, which picks
// one per input by the rule of balancedRowCondition below.
#pragma once

#include <optional>

#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

// The commands to append to a schedule whose loops (outermost first) are
// `loopOrder`; `reasons` gets one line per command for `tcc explain`.
std::vector<ScheduleCommand> defaultGpuMapping(const ir::IndexStmt& assignment,
                                               const std::vector<ir::IndexVar>& loopOrder,
                                               std::vector<std::string>& reasons);

// The nonzero-split mapping of a row-like statement over a CSR matrix (see
// above), or nothing when the statement is not one; `reasons` gets its
// lines for `tcc explain`. `matrix` names the CSR input.
struct BalancedGpuMapping {
  std::vector<ScheduleCommand> commands;
  std::string matrix;
  bool perWarp = false;  // SpMM's (a warp per share), else SpMV's (a thread per share)
  int share = 0;         // nonzeros a warp or thread takes
};
std::optional<BalancedGpuMapping> balancedGpuMapping(const ir::IndexStmt& assignment,
                                                     const std::vector<ir::IndexVar>& loopOrder,
                                                     std::vector<std::string>& reasons);

// The rule: the nonzero split runs when A's longest row holds at least
// kBalancedLongestRow nonzeros and at least kBalancedSkew times the mean row
// (longest * rows >= kBalancedSkew * nonzeros): there one warp walking the
// longest row alone would hold up the whole row-based kernel, while rows
// of about the mean length keep every warp of it busy. Both numbers are
// cheap: the longest row comes from a host copy of A's pos array made once
// per device tensor (tcc_longest_segment), the nonzeros from its ends.
inline constexpr int64_t kBalancedLongestRow = 256;
inline constexpr int64_t kBalancedSkew = 4;
// The condition (a bool of the host part) and the host statements that
// compute what it reads, for the CSR input `matrix`.
ir::imp::Expr balancedRowCondition(const std::string& matrix, std::vector<ir::imp::Stmt>& statements);
// Whether the rule picks the nonzero split for a matrix with these rows.
bool balancedRowRule(int64_t longestRow, int64_t rows, int64_t nonzeros);
// One host part running `balanced`'s body where the condition holds and
// `rows`' body otherwise (both lowered from the same statement, with the
// same parameters).
ir::imp::Function chooseByRowLengths(const ir::imp::Function& rows, const ir::imp::Function& balanced,
                                     const std::string& matrix);
// The explain line of the rule.
std::string balancedRuleText(const std::string& matrix);

// Whether a schedule parallelizes any loop (then it gets no default).
bool parallelizesLoops(const ScheduleRequest& request);

}  // namespace tcc::lowering
