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
#pragma once

#include <string>
#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

// The commands to append to a schedule whose loops (outermost first) are
// `loopOrder`; `reasons` gets one line per command for `tcc explain`.
std::vector<ScheduleCommand> defaultGpuMapping(const ir::IndexStmt& assignment,
                                               const std::vector<ir::IndexVar>& loopOrder,
                                               std::vector<std::string>& reasons);

// Whether a schedule parallelizes any loop (then it gets no default).
bool parallelizesLoops(const ScheduleRequest& request);

}  // namespace tcc::lowering
