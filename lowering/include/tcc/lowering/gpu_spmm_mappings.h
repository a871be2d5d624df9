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
//    few warps. Under fp fast the shares add a row's segments atomically;
//    under fp strict each split is two kernels, the shares' and the
//    crossing rows' (orderedSplitSums below), whose sums come in one order.
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
// Under fp strict the same rule picks the splits in one order instead
// (orderedSplitSums below): the atomic splits add a row's segments in
// another order each run. The numbers were measured on the atomic splits;
// the ones in one order add a second kernel and the slots' traffic
// (shares x N partial sums), which the same inputs amortize (see
// bench/cuda for the measurement of both).
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

enum class SpmmKernel { Tiles32, Tiles64, Tiles128, Split16, Split32, OrderedSplit16, OrderedSplit32 };
std::string toString(SpmmKernel kernel);
// The shares of a split (16 or 32), 0 for the tiles.
int shareOf(SpmmKernel kernel);
bool isOrderedSplit(SpmmKernel kernel);

// How the nonzero splits add the segments of a row that crosses shares:
// atomically (fp fast), in one order (fp strict: orderedSplitSums), or no
// split at all (the tiles alone).
enum class NonzeroSplits { None, Atomic, InOneOrder };

struct SpmmStatistics {
  int64_t rows = 0, nonzeros = 0, longestRow = 0, columns = 0;
};
SpmmKernel spmmKernelRule(const SpmmStatistics& matrix, NonzeroSplits splits = NonzeroSplits::Atomic);

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
// `matrix` names A, `output` C. The splits as `splits` says (their
// commands are the same; an ordered split's function is rewritten after
// lowering, orderedSplitSums).
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
                                            const std::vector<ir::IndexVar>& loopOrder,
                                            NonzeroSplits splits = NonzeroSplits::Atomic);

// One host part running, per input, the kernel the rule picks: `tiles64`
// (the default mapping's function) or one of `alternatives` (lowered from
// the same statement with the same parameters). A kernel the rule picks
// that is not among them runs as tiles of 64; where no split is among
// them, the rule is the tiles' alone (NonzeroSplits::None).
struct LoweredSpmmKernel {
  SpmmKernel kernel;
  ir::imp::Function function;
};
ir::imp::Function chooseSpmmKernel(const ir::imp::Function& tiles64, const std::vector<LoweredSpmmKernel>& alternatives,
                                   const std::string& matrix, const std::string& output);
// The explain line of the rule.
std::string spmmRuleText(const std::string& matrix, const std::string& output,
                         NonzeroSplits splits = NonzeroSplits::Atomic);

// The nonzero split in one order (fp strict): `split`, the function
// lowered from the split's commands (a warp per share of `share` nonzeros
// of `matrix` and tile of 32 columns, each lane walking the share's
// nonzeros and adding into the dense `output` atomically), rewritten so
// that every entry of the output comes out of one order of additions,
// whatever the order the warps run in:
//  1. each lane sums a row's segment of its share in a register, in the
//     order of the nonzeros (no atomics); a row that starts in the share
//     is stored into the output (no other share stores into that row in
//     this pass); a row that started in an earlier share (only the
//     share's first segment can be one) is stored into the share's slot
//     of a scratch array in device memory (shares x N entries, one
//     kernel's partials each, the host allocates and frees it).
//  2. a second kernel, a warp per (row, tile of 32 columns): a row whose
//     nonzeros cross from share s0 into share s1 > s0 adds the slots of
//     shares s0 + 1, ..., s1 onto its entry, in share order; an empty row
//     is zeroed (the split writes every entry: no zeroing before).
// A row's entry is then ((segment in s0 + slot of s0 + 1) + slot of s0 +
// 2) + ... + slot of s1, each segment summed from zero in the order of
// its nonzeros: fixed by the matrix and the shares alone, so the same bits
// every run. Nothing where `split` holds no such walk (its input then runs
// the tiles of 64).
std::optional<ir::imp::Function> orderedSplitSums(const ir::imp::Function& split, const std::string& matrix,
                                                  const std::string& output, int share);

}  // namespace tcc::lowering
