// Tiles and launch plans of the N:M SpMM kernels (tcc/lowering/nm_spmm.h).
#include <algorithm>
#include <string>

#include "tcc/lowering/nm_spmm.h"

namespace tcc::lowering {

namespace {

constexpr int kLargestSharedBytes = 227 * 1024;  // sm_90's opt-in limit per block
constexpr int kLargestKTile = 128;               // columns of A per k-tile
constexpr int kLargestDeepKTile = 256;           // the same for tiles with a kScale above 1
// Three stages where they leave room for two CTAs of 256 threads per SM.
constexpr int kThreeStageBytes = 112 * 1024;
// The mbarrier tiles' barriers: two of 8 bytes per stage (at most 4), aligned to 8.
constexpr int kBarrierBytes = 2 * 8 * 4 + 8;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int tileNamed(const std::string& name) {
  const auto& tiles = nmSpmmTiles();
  for (size_t index = 0; index < tiles.size(); ++index)
    if (tiles[index].name == name) return static_cast<int>(index);
  return -1;
}

NmSpmmPlan planFor(const NmSpmmShape& shape, int tileIndex, int splits) {
  NmSpmmPlan plan;
  plan.tile = tileIndex;
  if (tileIndex < 0) {
    int64_t blocks = std::min<int64_t>(std::max<int64_t>(ceilDiv(shape.m * shape.n, 256), 1), 65535);
    plan.grid[0] = static_cast<unsigned>(blocks);
    plan.threads = 256;
    return plan;
  }
  const NmSpmmTile& tile = nmSpmmTiles()[tileIndex];
  int64_t windows = ceilDiv(shape.k, shape.M);
  int64_t kTiles = std::max<int64_t>(ceilDiv(windows, nmSpmmTileWindows(tile, shape.N, shape.M)), 1);
  splits = static_cast<int>(std::clamp<int64_t>(splits, 1, kTiles));
  plan.tilesPerSplit = static_cast<int>(ceilDiv(kTiles, splits));
  plan.splits = static_cast<int>(ceilDiv(kTiles, plan.tilesPerSplit));
  plan.grid[0] = static_cast<unsigned>(std::max<int64_t>(ceilDiv(shape.n, tile.cols()), 1));
  plan.grid[1] = static_cast<unsigned>(std::max<int64_t>(ceilDiv(shape.m, tile.rows()), 1));
  plan.grid[2] = static_cast<unsigned>(plan.splits);
  plan.threads = tile.threads();
  plan.sharedBytes = nmSpmmSharedBytes(tile, shape.N, shape.M, shape.L);
  return plan;
}

int64_t ctasOf(const NmSpmmShape& shape, const NmSpmmTile& tile) {
  return ceilDiv(shape.m, tile.rows()) * ceilDiv(shape.n, tile.cols());
}

// (The 8-row tiles stage A k-major, so they take either layout; filtered all the same.)
std::vector<int> preferredTiles(const NmSpmmShape& shape) {
  std::vector<int> tiles = nmSpmmPreferredTiles(shape.N, shape.M, shape.L, shape.tensorCores);
  std::erase_if(tiles, [&](int index) { return !nmSpmmTileTakesA(nmSpmmTiles()[index], shape.aKMajor); });
  return tiles;
}

// The split-K factors the candidates try first.
constexpr int kSplits[] = {1, 2, 3, 4, 6, 8};
// The cluster kernels' split factors (CTAs per cluster): 3, 5, 6 and 8
// measured no faster than split-K with atomics (rounds 18-19; an H100's
// GPCs hold 66 clusters of 2 at once, 30 of 4, 15 of 8).
constexpr int kClusterSplits[] = {2, 4};

// How full the last wave is when `ctas` CTAs run `slots` at a time.
double waveFill(int64_t ctas, int64_t slots) { return static_cast<double>(ctas) / (ceilDiv(ctas, slots) * slots); }

// Few tiles of C (small m): the split-K factor up to 8 whose CTAs fill
// their last wave best, at most 4 waves and 2 k-tiles per split, where it
// fills it at least 95% and better than the factors of kSplits do (their
// grids often leave part of the last wave idle: 52 tiles of C x 6 on 132
// SMs is 2.4 waves, x 5 is 1.97). splits = 1 where none does.
NmSpmmPlan waveFittedSplitPlan(const NmSpmmShape& shape, int tileIndex, int multiprocessors) {
  const NmSpmmTile& tile = nmSpmmTiles()[tileIndex];
  const int64_t ctas = ctasOf(shape, tile);
  const int64_t slots = static_cast<int64_t>(multiprocessors) * nmSpmmCtasPerSm(tile);
  double listed = 0;
  for (int splits : kSplits) {
    NmSpmmPlan plan = planFor(shape, tileIndex, splits);
    if (plan.splits == splits && ctas * splits <= 4 * slots) listed = std::max(listed, waveFill(ctas * splits, slots));
  }
  NmSpmmPlan best = planFor(shape, tileIndex, 1);
  double bestFill = std::max(listed + 0.02, 0.95);
  for (int splits = 2; splits <= 8; ++splits) {
    NmSpmmPlan plan = planFor(shape, tileIndex, splits);
    if (plan.splits != splits || plan.tilesPerSplit < 2 || ctas * splits > 4 * slots) continue;
    double fill = waveFill(ctas * splits, slots);
    if (fill > bestFill) best = plan, bestFill = fill;
  }
  return best;
}

}  // namespace

// The wide tile leads above 70% sparsity (A's tile is then most of the
// traffic; a wider tile reads it for more columns), the large one below.
std::vector<int> nmSpmmPreferredTiles(int N, int M, int L, bool tensorCores) {
  double sparsity = 1.0 - static_cast<double>(N) / M;
  std::vector<int> order = sparsity > 0.7 ? std::vector<int>{1, 0, 2, 3} : std::vector<int>{0, 1, 2, 3};
  // Tensor cores: the wide tile first at every sparsity (it measured
  // fastest at 4096^3 from 50% to 87.5%, bench/nm_spmm/RESULTS.md).
  if (tensorCores) order = {tileNamed("tc_wide"), tileNamed("tc_large")};
  std::vector<int> fitting;
  for (int index : order)
    if (nmSpmmTileFits(nmSpmmTiles()[index], N, M, L)) fitting.push_back(index);
  return fitting;
}

const std::vector<NmSpmmTile>& nmSpmmTiles() {
  static const std::vector<NmSpmmTile> tiles = {
      {"large", 2, 4},   // 128 x 128, 256 threads
      {"wide", 2, 8},    // 128 x 256, 512 threads
      {"medium", 1, 4},  // 64 x 128, 128 threads
      {"small", 1, 2},   // 64 x 64, 64 threads
      // 128 x 256, 256 threads, 16 x 8 per thread, k-tiles of twice the
      // windows ("deep": half the pipeline steps per kept row); the next
      // k-tile's copies spread between the kept rows, its D's tile a k-tile
      // earlier (its first indices are read during the last kept row); each
      // kept row's loads written before the previous row's multiply-adds.
      {"tallwide_deep", 1, 8, 16, false, 2, false, false, true, false, true, true},
      // The mbarrier pipeline (no CTA barrier per k-tile), which measured
      // fastest above 50% sparsity and for many shapes below 4096 rows:
      {"large_mbar", 2, 4, 8, false, 1, false, true},
      {"tallwide_deep_mbar", 1, 8, 16, false, 2, false, true, true},
      // 64 x 512, 512 threads: above 60% sparsity A's tile (M/N columns per
      // kept row) is most of the traffic, and a wider tile reads it for more
      // columns of C (A + B' per FMA: (M/N)/512 + 1/64 against (M/N)/256 +
      // 1/128 for 128 x 256). A k-major (two float4 loads of A per kept row),
      // or "_rows" row-major (16-byte copies, one float per row and kept row);
      // D's tile by column group in both.
      {"xwide_deep_mbar", 1, 16, 8, false, 2, false, true, false, true},
      {"xwide_rows_deep_mbar", 1, 16, 8, true, 2, false, true, false, true},
      // The same with each kept row's loads written a row ahead (faster on
      // some shapes, slower on others: the autotuner measures both).
      {"xwide_deep_mbar_pipe", 1, 16, 8, false, 2, false, true, false, true, false, true},
      {"xwide_rows_deep_mbar_pipe", 1, 16, 8, true, 2, false, true, false, true, false, true},
      // For a k-major A only (their row-major builds measured slower), with
      // A's tile at the pitch of its rows and a kept row's column found by a
      // shift instead of a multiply-add on the FMA pipe: tallwide_deep with
      // k-tiles of twice its windows (32 kept rows per barrier at 75%, two
      // stages), and xwide_deep_mbar_pipe (rounds 18-20).
      {"tallwide_deep4", 1, 8, 16, false, 4, false, false, true, false, true, true, true, true},
      {"xwide_deep_mbar_pipe_sh", 1, 16, 8, false, 2, false, true, false, true, false, true, true, true},
      // Tensor cores (tensorcore() only), 8 warps of 64 x 32: 64 x 256
      // (A's tile, most of the traffic above 60% sparsity, read for more
      // columns) and 128 x 128; k-tiles of up to four times the usual
      // windows (fewer barriers and longer chains of products per flush).
      {.name = "tc_wide", .warpsM = 1, .warpsN = 8, .kScale = 4, .tensorCores = true},
      {.name = "tc_large", .warpsM = 2, .warpsN = 4, .kScale = 4, .tensorCores = true},
  };
  return tiles;
}

int nmSpmmWindowsPerTile(int N, int M) {
  if (N < 1 || M < 1 || N > M) return 0;
  // At least 32 columns of A and 8 kept rows per k-tile, in whole windows,
  // a multiple of 8 columns (the A tile's loads go by pairs of float4).
  int windows = std::max(1, (32 + M - 1) / M);
  while (windows * N < 8 && windows * M < 64) windows *= 2;
  while ((windows * M) % 8 != 0) ++windows;
  return windows * M <= kLargestKTile ? windows : 0;
}

namespace {
int tensorCoreStageBytes(const NmSpmmTile& tile, int windows, int N, int M, int groups) {
  const int ks = windows * M, ws = windows * N;
  return 4 * (tile.rows() * (ks + 4) + ws * (tile.cols() + 8) + ws * groups);
}
}  // namespace

int nmSpmmTileWindows(const NmSpmmTile& tile, int N, int M) {
  if (tile.tensorCores) {
    // The most windows (kScale times the usual, or half or a quarter of
    // that) whose kept rows fill whole steps of 8 and whose k-tile fits two
    // stages (D's tile counted at its largest, a group per 8 columns).
    const int base = nmSpmmWindowsPerTile(N, M);
    for (int scale = std::max(tile.kScale, 1); base > 0 && scale >= 1; scale /= 2) {
      const int windows = base * scale;
      if ((windows * N) % 8 == 0 && windows * M <= kLargestDeepKTile &&
          2 * tensorCoreStageBytes(tile, windows, N, M, tile.cols() / 8) <= kLargestSharedBytes)
        return windows;
    }
    return 0;
  }
  int windows = nmSpmmWindowsPerTile(N, M) * std::max(tile.kScale, 1);
  return windows * M <= (tile.kScale > 1 ? kLargestDeepKTile : kLargestKTile) ? windows : 0;
}

namespace {

int stageBytes(const NmSpmmTile& tile, int N, int M, int L) {
  int windows = nmSpmmTileWindows(tile, N, M);
  int ks = windows * M, ws = windows * N;
  int groups = tile.cols() >= L ? tile.cols() / std::max(L, 1) : 1;  // column groups of D's tile
  if (tile.tensorCores) return tensorCoreStageBytes(tile, windows, N, M, groups);
  int aFloats = tile.rowMajorA ? tile.rows() * (((ks + 27) / 32) * 32 + 4) : ks * (tile.rows() + 4);
  return 4 * (aFloats + ws * tile.cols() + ws * groups);
}

}  // namespace

bool nmSpmmPacks(int N, int M) { return N > 0 && M > 0 && 1.0 - static_cast<double>(N) / M > 0.7; }

bool nmSpmmTilePacks(const NmSpmmTile& tile, int N, int M) {
  return nmSpmmPacks(N, M) && !tile.rowMajorA && tile.kScale == 1 && !tile.mbarriers && !tile.tensorCores;
}

int nmSpmmStages(const NmSpmmTile& tile, int N, int M, int L, bool packed) {
  if (packed) return 2;
  if (tile.tensorCores) {
    // As many as fit, up to four (a CTA per SM: its registers take the SM's).
    const int bytes = stageBytes(tile, N, M, L);
    for (int stages = 4; stages >= 2; --stages)
      if (stages * bytes <= kLargestSharedBytes) return stages;
    return 0;
  }
  // A CTA that has the SM's registers to itself (512 threads, or 16 rows
  // per thread) may take most of the shared memory too.
  bool alone = tile.threads() >= 512 || tile.threadRows > 8;
  int limit = alone ? kLargestSharedBytes - 24 * 1024 : kThreeStageBytes;
  int bytes = stageBytes(tile, N, M, L);
  if (tile.mbarriers) {
    // Two k-tiles in flight ahead of the computed one need four stages;
    // three leave one (and the drift of a k-tile).
    limit -= kBarrierBytes;
    return 4 * bytes <= limit ? 4 : 3 * bytes <= limit ? 3 : 0;
  }
  return 3 * bytes <= limit ? 3 : 2;
}

int nmSpmmSharedBytes(const NmSpmmTile& tile, int N, int M, int L, bool packed) {
  int stages = nmSpmmStages(tile, N, M, L, packed);
  int bytes = stages * stageBytes(tile, N, M, L);
  if (tile.tensorCores) return stages == 0 ? kLargestSharedBytes + 1 : bytes;
  if (tile.mbarriers) return stages == 0 ? kLargestSharedBytes + 1 : bytes + kBarrierBytes;
  if (tile.dNext && !packed) {
    const int windows = nmSpmmTileWindows(tile, N, M);
    const int groups = tile.cols() >= L ? tile.cols() / std::max(L, 1) : 1;
    return bytes + 4 * windows * N * groups;  // one more slot of D's tile
  }
  if (!packed) return bytes;
  int windows = nmSpmmTileWindows(tile, N, M);
  // A third slot of D's tile, and two masks of the used columns.
  return bytes + 4 * windows * N * (tile.cols() / 4) + 4 * 2 * ((windows * M + 31) / 32);
}

bool nmSpmmTileTakesA(const NmSpmmTile& tile, bool aKMajor) {
  return aKMajor ? !tile.rowMajorA && !tile.tensorCores : !tile.kMajorAOnly;
}

bool nmSpmmTileTransposesA(const NmSpmmTile& tile, int N, int M, int L) {
  if (!nmSpmmTileFits(tile, N, M, L)) return false;
  if (tile.kMajorAOnly) return true;
  const bool kMajorOnlyFits = std::any_of(nmSpmmTiles().begin(), nmSpmmTiles().end(), [&](const NmSpmmTile& other) {
    return other.kMajorAOnly && nmSpmmTileFits(other, N, M, L);
  });
  return !kMajorOnlyFits && std::string(tile.name) == "tallwide_deep";
}

bool nmSpmmTileFits(const NmSpmmTile& tile, int N, int M, int L) {
  if (nmSpmmTileWindows(tile, N, M) == 0 || L < 4 || L % 4 != 0) return false;
  // Tensor cores: each step's 8 columns of B' in one column group.
  if (tile.tensorCores && (L % 8 != 0 || (L % 32 != 0 && 32 % L != 0))) return false;
  if (tile.cols() % L != 0 && L % tile.cols() != 0) return false;
  return nmSpmmSharedBytes(tile, N, M, L, nmSpmmTilePacks(tile, N, M)) <= kLargestSharedBytes;
}

NmSpmmPlan nmSpmmDefaultPlan(const NmSpmmShape& shape, int multiprocessors) {
  std::vector<int> tiles = preferredTiles(shape);
  if (tiles.empty()) return planFor(shape, -1, 1);
  multiprocessors = std::max(multiprocessors, 1);
  for (int index : tiles)
    if (ctasOf(shape, nmSpmmTiles()[index]) >= multiprocessors) return planFor(shape, index, 1);
  // Too few CTAs for one wave even with the smallest tile: split k so
  // that about two waves run.
  int smallest = tiles.back();
  int64_t ctas = ctasOf(shape, nmSpmmTiles()[smallest]);
  int splits = static_cast<int>(std::clamp<int64_t>(ceilDiv(2 * multiprocessors, ctas), 1, 16));
  return planFor(shape, smallest, splits);
}

int nmSpmmCtasPerSm(const NmSpmmTile& tile) {
  return tile.threads() >= 512 || tile.threadRows > 8 || tile.tensorCores ? 1 : 2;
}

std::string nmSpmmTensorCoresRefusal(int N, int M, int L) {
  if (!nmSpmmPreferredTiles(N, M, L, true).empty()) return "";
  if (L % 8 != 0 || (L % 32 != 0 && 32 % L != 0))
    return "the tensor-core N:M kernels multiply 8 columns of B' at a time, each within one column group of L: L must "
           "be 8, 16 or a multiple of 32 (nm(" + std::to_string(N) + "," + std::to_string(M) + "," +
           std::to_string(L) + "))";
  return "the tensor-core N:M kernels need k-tiles of whole windows of M = " + std::to_string(M) + " columns whose " +
         "kept rows (N = " + std::to_string(N) + " a window) come in whole steps of 8, with A's tile and B''s in "
         "shared memory twice over; nm(" + std::to_string(N) + "," + std::to_string(M) + "," + std::to_string(L) +
         ") has none";
}

NmSpmmPlan nmSpmmStreamKPlan(const NmSpmmShape& shape, int tileIndex, int64_t ctas, NmSpmmStreamK kind) {
  NmSpmmPlan plan = planFor(shape, tileIndex, 1);
  int64_t kTiles = plan.tilesPerSplit;  // unsplit: all of the tile's k-tiles
  int64_t tiles = ctasOf(shape, nmSpmmTiles()[tileIndex]);
  int64_t steps = tiles * kTiles;
  plan.streamK = true;
  ctas = std::clamp<int64_t>(ctas, 1, steps);
  const int64_t whole = kind == NmSpmmStreamK::Hybrid ? tiles / ctas : 0;
  const int64_t left = steps - whole * ctas * kTiles;  // the steps shared out
  const int64_t perCta = ceilDiv(left, ctas);
  const int64_t grid = whole > 0 ? ctas : ceilDiv(left, perCta);
  plan.wholeTiles = static_cast<int>(whole);
  plan.tilesPerSplit = static_cast<int>(perCta);
  plan.grid[0] = static_cast<unsigned>(grid);
  plan.grid[1] = plan.grid[2] = 1;
  return plan;
}

std::vector<NmSpmmPlan> nmSpmmCandidatePlans(const NmSpmmShape& shape, int multiprocessors) {
  std::vector<NmSpmmPlan> plans{nmSpmmDefaultPlan(shape, multiprocessors)};
  if (plans[0].tile < 0) return plans;
  multiprocessors = std::max(multiprocessors, 1);
  // The default plan's tiles, then the 16-row tiles, which only the
  // measurements choose.
  std::vector<int> tiles = preferredTiles(shape);
  for (int index = 4; index < static_cast<int>(nmSpmmTiles().size()); ++index)
    if (!nmSpmmTiles()[index].tensorCores && !shape.tensorCores && nmSpmmTileFits(nmSpmmTiles()[index], shape.N, shape.M, shape.L) &&
        nmSpmmTileTakesA(nmSpmmTiles()[index], shape.aKMajor))
      tiles.push_back(index);
  for (int index : tiles) {
    int64_t ctas = ctasOf(shape, nmSpmmTiles()[index]);
    for (int splits : kSplits) {
      if (splits > 1 && ctas >= 2 * multiprocessors) break;  // enough CTAs already
      if (splits > 1 && ctas * splits > 6 * multiprocessors) break;
      NmSpmmPlan plan = planFor(shape, index, splits);
      if (splits > 1 && plan.tilesPerSplit < 2) break;
      for (bool packed : {false, true}) {
        if (packed && !nmSpmmTilePacks(nmSpmmTiles()[index], shape.N, shape.M)) continue;
        plan.packed = packed;
        plan.sharedBytes = nmSpmmSharedBytes(nmSpmmTiles()[index], shape.N, shape.M, shape.L, packed);
        bool seen = std::any_of(plans.begin(), plans.end(), [&](const NmSpmmPlan& other) {
          return other.tile == plan.tile && other.splits == plan.splits && other.packed == plan.packed &&
                 !other.streamK && other.cluster == 1;
        });
        if (!seen) plans.push_back(plan);
      }
    }
    if (ctas < 2 * multiprocessors) {
      NmSpmmPlan fitted = waveFittedSplitPlan(shape, index, multiprocessors);
      bool seen = std::any_of(plans.begin(), plans.end(), [&](const NmSpmmPlan& other) {
        return other.tile == fitted.tile && other.splits == fitted.splits && !other.packed && !other.streamK &&
               other.cluster == 1;
      });
      if (fitted.splits > 1 && !seen) plans.push_back(fitted);
    }
    // Split-K summed in a thread block cluster, for up to six waves of CTAs
    // (as the split-K factors above).
    if (nmSpmmTileClusters(nmSpmmTiles()[index]) && ctas < 2 * multiprocessors) {
      const int64_t slots = static_cast<int64_t>(multiprocessors) * nmSpmmCtasPerSm(nmSpmmTiles()[index]);
      for (int splits : kClusterSplits) {
        NmSpmmPlan plan = nmSpmmClusterPlan(shape, index, splits);
        if (plan.cluster == splits && plan.tilesPerSplit >= 2 && ctas * splits <= 6 * slots) plans.push_back(plan);
      }
    }
    // Stream-K where the tiles leave the last wave less than 99% full: one
    // CTA per SM slot, each with an equal share of the k-tiles of all tiles.
    const NmSpmmTile& tile = nmSpmmTiles()[index];
    if (tile.mbarriers) {
      int64_t slots = static_cast<int64_t>(multiprocessors) * nmSpmmCtasPerSm(tile);
      int64_t waves = ceilDiv(ctas, slots);
      NmSpmmPlan plan = nmSpmmStreamKPlan(shape, index, slots);
      if (ctas < 0.99 * waves * slots && plan.tilesPerSplit >= 2) plans.push_back(plan);
      // More than a wave of tiles, the last part empty: one persistent CTA
      // per SM slot, whole tiles for the full waves and stream-K for the
      // rest. (A persistent grid of whole tiles alone measured no faster
      // than the plain launch, bench/nm_spmm/RESULTS.md.)
      if (ctas > slots && ctas % slots != 0)
        plans.push_back(nmSpmmStreamKPlan(shape, index, slots, NmSpmmStreamK::Hybrid));
    }
  }
  // A row-major A: the plans of the tiles that run on its transpose too
  // (nmSpmmTileTransposesA), each after a transpose of A (timed with it:
  // the autotuner picks one only where the two launches beat the row-major
  // kernels).
  if (!shape.aKMajor && !shape.tensorCores) {
    NmSpmmShape kMajor = shape;
    kMajor.aKMajor = true;
    for (NmSpmmPlan plan : nmSpmmCandidatePlans(kMajor, multiprocessors)) {
      if (plan.tile < 0 || !nmSpmmTileTransposesA(nmSpmmTiles()[plan.tile], shape.N, shape.M, shape.L)) continue;
      plan.transposeA = true;
      plans.push_back(plan);
    }
  }
  return plans;
}

bool nmSpmmTileClusters(const NmSpmmTile& tile) {
  const std::string name = tile.name;
  return name == "tallwide_deep" || name == "tallwide_deep_mbar" || name == "xwide_deep_mbar_pipe";
}

NmSpmmPlan nmSpmmClusterPlan(const NmSpmmShape& shape, int tileIndex, int splits) {
  NmSpmmPlan plan = planFor(shape, tileIndex, splits);
  const NmSpmmTile& tile = nmSpmmTiles()[tileIndex];
  if (!nmSpmmTileClusters(tile) || splits < 2 || splits > kNmSpmmLargestCluster || plan.splits != splits) return plan;
  plan.cluster = splits;
  // The partial tile (rows of BN + 4 floats) over the stages.
  plan.sharedBytes = std::max(plan.sharedBytes, 4 * tile.rows() * (tile.cols() + 4));
  return plan;
}

std::string nmSpmmPlanLabel(const NmSpmmPlan& plan) { return nmSpmmKernelName("", plan).substr(1); }

int nmSpmmLaunchFlag(const NmSpmmPlan& plan) {
  return plan.streamK ? plan.wholeTiles : plan.splits > 1 && plan.cluster <= 1 ? 1 : 0;
}

int64_t nmSpmmZeroedFrom(const NmSpmmShape& shape, const NmSpmmPlan& plan) {
  if (plan.tile < 0 || (!plan.streamK && (plan.splits <= 1 || plan.cluster > 1))) return shape.m;
  if (!plan.streamK) return 0;
  const NmSpmmTile& tile = nmSpmmTiles()[plan.tile];
  int64_t tilesN = std::max<int64_t>(ceilDiv(shape.n, tile.cols()), 1);
  int64_t wholeTiles = std::min<int64_t>(ctasOf(shape, tile), int64_t(plan.grid[0]) * plan.wholeTiles);
  return std::min<int64_t>(shape.m, (wholeTiles / tilesN) * tile.rows());
}

std::string nmSpmmKernelName(const std::string& prefix, const NmSpmmPlan& plan) {
  if (plan.tile < 0) return prefix + "_simple";
  return prefix + "_" + nmSpmmTiles()[plan.tile].name + (plan.transposeA ? "_at" : "") +
         (plan.packed           ? "_packed"
          : plan.streamK        ? (plan.wholeTiles > 0 ? "_hy" : "_sk")
          : plan.cluster > 1    ? "_cl"
                                : "");
}

std::string nmSpmmTransposeKernelName(const std::string& prefix) { return prefix + "_transpose_a"; }

}  // namespace tcc::lowering
