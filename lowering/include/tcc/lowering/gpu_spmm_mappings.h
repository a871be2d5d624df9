// The default GPU mapping of a CSR SpMM with no schedule, C(i, k) = A(i, j)
// * B(j, k) (any product of A with dense operands, C dense): five kernels
// lowered side by side from the one statement, and a rule in the host part
// that runs one of them per input, by A's row statistics (rows, nonzeros,
// longest row) and C's columns N.
//
//  - Column tiles of 32, 64 or 128 (columnTileMapping): a warp per (row,
//    tile), lane l owning the tile's columns l, l + 32, ... summed in one
//    walk over the row's nonzeros (unroll and jam). A wider tile reads a
//    row's nonzeros fewer times and keeps more loads of B in flight per
//    nonzero, but holds more sums (registers) per lane and gives a row
//    fewer warps.
//  - A nonzero split in shares of 16 or 32 nonzeros a warp
//    (nonzeroSplitGpuMapping in gpu_default_mapping.h): for a long row far
//    above the mean, or for a few long rows that give the row kernel too
//    few warps.
//
// The rule (written once in spmm_mappings.cpp, from which gpu_input_rules.h
// derives spmmKernelRule, the host part's statements, which read a host
// copy of A's pos made once per device tensor, and spmmRuleText):
//  1. A long, skewed row (balancedRowRule) whose walk outweighs the rest of
//     the work (nonzeros * N < kSplitWorkPerLongestRow * longest row): the
//     split, in shares of 16 where the matrix is small (nonzeros at most
//     kSmallSplit), else 32. Past that work the row kernel's long walk is
//     hidden by the other rows while the split's atomics grow with N.
//  2. Few, long rows (rows * N <= kFewRowWork, mean row at least
//     kLongMeanRow): the split in shares of 16.
//  3. Otherwise the row kernel: where there are at least kManyRows rows and
//     none of kLongRowForOtherTiles or more, tiles of 32 where N <= 32 and
//     of 128 where N > 64; tiles of 64 otherwise.
// Under fp strict the splits are left out (their atomic additions of a
// row's segments come in another order each run): 3. alone picks among the
// tiles, whose lanes each sum a column in the row's order.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

// The row mapping of a row-like statement with the dense `column` in tiles
// of `tile` columns (a multiple of 32): split(k, k_tile, k_in, tile),
// split(k_in, k_round, k_lane, 32), reorder(i, k_tile, k_lane, k_round,
// ...), fuse(i, k_tile, ik_warp), parallelize(ik_warp, GPUWarp),
// parallelize(k_lane, GPUThread), unroll(k_round, tile / 32) and, where
// the innermost loop walks a sparse level, unroll(j, 4). Tiles of 32 have
// no k_round: split(k, k_tile, k_lane, 32). `reasons` gets its line.
std::vector<ScheduleCommand> columnTileMapping(const ir::IndexVar& rows, const ir::IndexVar& column,
                                               const std::vector<ir::IndexVar>& loopOrder,
                                               const std::set<ir::IndexVar>& sparseLevelVars, int tile,
                                               std::vector<std::string>& reasons);

enum class SpmmKernel { Tiles32, Tiles64, Tiles128, Split16, Split32 };
std::string toString(SpmmKernel kernel);

struct SpmmStatistics {
  int64_t rows = 0, nonzeros = 0, longestRow = 0, columns = 0;
};
// Without `nonzeroSplits` (fp strict), among the tiles alone.
SpmmKernel spmmKernelRule(const SpmmStatistics& matrix, bool nonzeroSplits = true);

// The rule's numbers (see above and gpu_spmm_mappings.cpp for what was
// measured).
inline constexpr int64_t kSplitWorkPerLongestRow = 32768;
inline constexpr int64_t kSmallSplit = 131072;
inline constexpr int64_t kFewRowWork = 65536;
inline constexpr int64_t kLongMeanRow = 64;
inline constexpr int64_t kManyRows = 4096;
inline constexpr int64_t kLongRowForOtherTiles = 1024;

// The kernels beside the default's tiles of 64 for an unscheduled CSR
// SpMM, each with its commands; nothing where the statement is not one.
// `matrix` names A, `output` C. Without `nonzeroSplits` (fp strict), the
// tiles of 32 and 128 alone.
struct SpmmAlternative {
  SpmmKernel kernel;
  std::vector<ScheduleCommand> commands;
  std::vector<std::string> reasons;
};
struct SpmmMappings {
  std::string matrix, output;
  std::vector<SpmmAlternative> alternatives;
};
std::optional<SpmmMappings> spmmGpuMappings(const ir::IndexStmt& assignment,
                                            const std::vector<ir::IndexVar>& loopOrder, bool nonzeroSplits = true);

// One host part running, per input, the kernel the rule picks: `tiles64`
// (the default mapping's function) or one of `alternatives` (lowered from
// the same statement with the same parameters). A kernel the rule picks
// that is not among them runs as tiles of 64; where no split is among
// them, the rule is the tiles' alone (spmmKernelRule without splits).
struct LoweredSpmmKernel {
  SpmmKernel kernel;
  ir::imp::Function function;
};
ir::imp::Function chooseSpmmKernel(const ir::imp::Function& tiles64, const std::vector<LoweredSpmmKernel>& alternatives,
                                   const std::string& matrix, const std::string& output);
// The explain line of the rule (without `nonzeroSplits`, the tiles' alone).
std::string spmmRuleText(const std::string& matrix, const std::string& output, bool nonzeroSplits = true);

}  // namespace tcc::lowering
