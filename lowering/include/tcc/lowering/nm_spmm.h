// The N:M SpMM intrinsic's launch plans, shared by the CUDA backend's
// printed host code and the library's in-process host step.
//
// C(i,j) = A(i,k) * B(k,j), B stored {dense, nm(N,M,L)} (tcc/runtime/nm.h),
// is computed by one of a few kernels generated per statement: each CTA
// computes a BM x BN tile of C from k-tiles of KW pruning windows (ks = KW*M
// columns of A, ws = KW*N kept rows of B'); warps are 8 x 4 threads, each
// thread a TM x 8 register tile (TM = 8 or 16), so a warp computes 8TM x 32
// and a CTA of warpsM x warpsN warps computes (8TM warpsM) x (32 warpsN). Split-K (the
// grid's z) divides the k-tiles among CTAs that add into C atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::lowering {

inline constexpr const char* kNmSpmmIntrinsic = "nm_spmm";

// The paper's small/medium/large table, adapted to 8x8 thread tiles, plus
// a wide tile for high sparsity (it reads each A tile for more columns).
struct NmSpmmTile {
  const char* name;  // kernel suffix
  int warpsM, warpsN;
  int threadRows = 8;  // rows of C per thread: 8, or 16 (more reuse per shared-memory load, one CTA per SM)
  // A's tile row-major in shared memory, copied by 16 bytes (else k-major,
  // copied by 4 bytes and read by float4); these kernels do not pack.
  bool rowMajorA = false;
  // k-tiles of kScale times the usual windows (more kept rows per barrier).
  int kScale = 1;
  // The k-tile computed in a rolled loop over chunks of the usual windows
  // (unrolled within a chunk), so the code is no larger than with kScale 1.
  bool rolled = false;
  // The k-tiles' pipeline paced by mbarriers instead of a CTA barrier: a
  // "full" barrier per stage completes when every thread's copies into it
  // have landed (cp.async.mbarrier.arrive), an "empty" one when every
  // thread has computed on it; a stage is refilled two k-tiles after it was
  // computed, so warps drift up to a k-tile apart instead of meeting at a
  // barrier every k-tile. Three or four stages.
  bool mbarriers = false;
  // The next k-tile's copies issued a few at a time between the kept rows
  // of the computed one (where the k-tile lies inside the operands) instead
  // of in one burst before it: the copies' issue and the load-store
  // unit's backpressure then stall one warp for a few cycles at a time, in
  // the shadow of the other warps' multiply-adds.
  bool spread = false;
  // D's tile stored by column group, one 16-byte load for four kept rows'
  // indices (instead of one load per kept row).
  bool dColumns = false;
  // D's tile copied a k-tile ahead of A's and B''s (one more slot), so that
  // the next k-tile's first indices are read during the last kept row of
  // the one before (CTA-barrier tiles that do not pack).
  bool dNext = false;
  // Each kept row's shared-memory loads (D's index, A's fragment, B''s
  // values) written before the previous row's multiply-adds.
  bool pipelined = false;
  // Planned only for a k-major A (its row-major build measured slower than
  // the other tiles).
  bool kMajorAOnly = false;
  // (kMajorAOnly tiles) A's k-major tile at the pitch of its rows, a power
  // of two, so that a kept row's column of it is a shift, not a multiply-add
  // on the FMA pipe.
  bool shiftA = false;
  // Tensor cores (the schedule's tensorcore()): each warp computes 64 x 32
  // of C by mma.sync m16n8k8 on TF32 in three products per pair of values
  // (3xTF32: a = a_big + a_small, each a TF32 value; a_big b_big + a_big
  // b_small + a_small b_big), each k-tile's sums in registers of their own
  // added into the totals in float32 (the tensor cores' accumulation
  // truncates; a chain over all of k drifts past 1e-5). Only these tiles
  // run under tensorcore(), and only there.
  bool tensorCores = false;
  int rows() const { return 8 * threadRows * warpsM; }
  int cols() const { return 32 * warpsN; }
  int threads() const { return 32 * warpsM * warpsN; }
};
const std::vector<NmSpmmTile>& nmSpmmTiles();

struct NmSpmmShape {
  int64_t m = 0, n = 0, k = 0;  // C is m x n, A m x k, B k x n
  int N = 0, M = 0, L = 0;
  // A stored k-major ({dense, dense} order (1,0): A(i,kk) at kk * m + i);
  // then only the tiles that take it are planned (nmSpmmTileTakesA).
  bool aKMajor = false;
  // The statement asked for tensor cores (tensorcore()): only the
  // tensorCores tiles are planned.
  bool tensorCores = false;
};

// Pruning windows per k-tile, or 0 when M is too large for a shared-memory
// tile (the simple kernel then runs).
int nmSpmmWindowsPerTile(int N, int M);
// Windows per k-tile of tile `tile` (its kScale times the above), or 0.
int nmSpmmTileWindows(const NmSpmmTile& tile, int N, int M);
// Whether tile `tile` can run the shape's N, M and L (L a multiple of 4 that
// divides or is divided by the tile's columns, a k-tile that fits).
bool nmSpmmTileFits(const NmSpmmTile& tile, int N, int M, int L);
// Whether tile `tile` has a kernel for A in that layout: every tile but the
// kMajorAOnly ones reads a row-major A; a k-major A (its columns
// contiguous) is copied by 16 bytes into the tiles that stage A k-major in
// shared memory, not into the row-major (rowMajorA) ones.
bool nmSpmmTileTakesA(const NmSpmmTile& tile, bool aKMajor);
// Whether a row-major A is planned on tile `tile` after a transpose into a
// k-major scratch buffer (NmSpmmPlan::transposeA) for N:M: the k-major-only
// tiles, and where none of them fits (50% and denser) the 16-row tile
// tallwide_deep's k-major build; their k-major kernels measured faster
// than the row-major ones, by more than the transpose costs on some shapes
// (bench/nm_spmm/RESULTS.md, rounds 20-24).
bool nmSpmmTileTransposesA(const NmSpmmTile& tile, int N, int M, int L);
// Indices of the 8-row tiles that fit N, M, L, most preferred first (the
// default plan's choices; the autotuner also measures the 16-row tiles).
// With tensorCores, the tensorCores tiles that fit, in the same sense.
std::vector<int> nmSpmmPreferredTiles(int N, int M, int L, bool tensorCores = false);
// Why no tensorCores tile computes nm(N, M, L) (empty when one does).
std::string nmSpmmTensorCoresRefusal(int N, int M, int L);
// Whether N:M is sparse enough (above 70%) for the packing kernels: they
// copy only the columns of A's tile that some kept row reads (the paper's
// col_info, found per k-tile from D), at the cost of a barrier per k-tile.
bool nmSpmmPacks(int N, int M);
// Whether tile `tile` has a packing kernel for N:M (the k-major tiles with kScale 1 do).
bool nmSpmmTilePacks(const NmSpmmTile& tile, int N, int M);
// Pipeline stages (k-tiles in shared memory at once) of tile `tile`: 3, or
// 2 where three would not leave room for a second CTA; packing: 2; the
// mbarrier tiles: 4 where they fit, else 3 (0: they do not fit). L sets
// the size of D's tile (one entry per kept row and column group).
int nmSpmmStages(const NmSpmmTile& tile, int N, int M, int L, bool packed = false);
// Dynamic shared memory of tile `tile`'s kernel, in bytes.
int nmSpmmSharedBytes(const NmSpmmTile& tile, int N, int M, int L, bool packed = false);

struct NmSpmmPlan {
  int tile = -1;   // index into nmSpmmTiles(); -1: the simple kernel
  bool packed = false;  // the tile's packing kernel
  // The tile's stream-K kernel (mbarrier tiles): grid[0] persistent CTAs,
  // each taking wholeTiles whole tiles of C, then tilesPerSplit
  // consecutive (tile of C, k-tile) steps of the tiles left; C's rows from
  // the first of those tiles on are zeroed first. wholeTiles = 0: stream-K
  // proper ("_sk"); else whole tiles for the full waves, stream-K for the
  // rest ("_hy", a hybrid).
  bool streamK = false;
  int wholeTiles = 0;
  int splits = 1;  // split-K factor (grid z)
  // CTAs per thread block cluster along z: the cluster kernel ("_cl") with
  // all `splits` CTAs of a tile of C in one cluster; 1: no clusters.
  int cluster = 1;
  int tilesPerSplit = 0;
  // A row-major A first transposed into a k-major scratch buffer (the
  // statement's transpose kernel, nmSpmmTransposeKernelName), then the
  // tile's k-major kernel run on it (label "_at"): for the k-major-only
  // tiles and a few others (nmSpmmTileTransposesA), for a row-major A.
  bool transposeA = false;
  unsigned grid[3] = {1, 1, 1};
  int threads = 0;
  int sharedBytes = 0;
};

// The default plan (no timing): the largest tile that fills the GPU's
// `multiprocessors` with at least one wave, the wide tile above 70%
// sparsity, split-K when even the smallest tile leaves SMs idle.
NmSpmmPlan nmSpmmDefaultPlan(const NmSpmmShape& shape, int multiprocessors);
// Plans worth timing for the autotuner (the default first).
std::vector<NmSpmmPlan> nmSpmmCandidatePlans(const NmSpmmShape& shape, int multiprocessors);
// Products below this many floating-point operations (2 m n k N/M) are not
// autotuned: measuring the candidates would cost more than it could save.
inline constexpr double kNmSpmmAutotuneFlops = 1.0e8;

enum class NmSpmmStreamK {
  Steps,   // the steps divided evenly (at least one per CTA)
  Hybrid,  // whole tiles for the full waves of `ctas`, the rest's steps divided evenly
};
// The stream-K plan of tile `tile` (an mbarrier tile) over `ctas` CTAs.
NmSpmmPlan nmSpmmStreamKPlan(const NmSpmmShape& shape, int tile, int64_t ctas,
                             NmSpmmStreamK kind = NmSpmmStreamK::Steps);
// Whether tile `tile` also has a split-K kernel whose splits of a tile of C
// run as one thread block cluster and sum their partial tiles through
// distributed shared memory (label "_cl"; no zeroing launch, no atomics):
// the 16-row tiles and the 64 x 512 one with A k-major in shared memory
// (bench/nm_spmm/RESULTS.md, rounds 18-19).
bool nmSpmmTileClusters(const NmSpmmTile& tile);
// The split-K plan of tile `tile` (one with clusters) whose `splits` CTAs
// per tile of C (2 to 8) form a thread block cluster and sum their partial
// tiles in it; its shared memory holds the partial tile too. cluster is
// left 1 (no such plan) where the k-tiles do not give exactly `splits`
// non-empty splits.
NmSpmmPlan nmSpmmClusterPlan(const NmSpmmShape& shape, int tile, int splits);
// The most CTAs per cluster (the portable limit).
inline constexpr int kNmSpmmLargestCluster = 8;
// The kernels' last argument: 1 for split-K (add into C), a stream-K
// plan's whole tiles per CTA, else 0.
int nmSpmmLaunchFlag(const NmSpmmPlan& plan);
// The first row of C that must be zeroed before the plan's launch (split-K
// and stream-K add into C), or m where none must.
int64_t nmSpmmZeroedFrom(const NmSpmmShape& shape, const NmSpmmPlan& plan);
// CTAs of tile `tile` that one SM holds at once (1 for 512 threads or 16
// rows per thread, else 2).
int nmSpmmCtasPerSm(const NmSpmmTile& tile);
// The kernel's name in the module for a plan: prefix_<tile name>, with
// _packed for a packing kernel, _sk for a stream-K one and _hy for one
// that takes whole tiles first (a hybrid), _cl for a cluster one, or
// prefix_simple; prefix_zero
// clears C before a split-K or stream-K launch.
std::string nmSpmmKernelName(const std::string& prefix, const NmSpmmPlan& plan);
// The plan's name in the autotuner's report and for TCC_NM_SPMM_TILE: the
// kernel's suffix.
std::string nmSpmmPlanLabel(const NmSpmmPlan& plan);

// The transpose of a row-major A (m x k) into a k-major one (k x m, A(i,kk)
// at kk * m + i) that plans with transposeA launch first: kernel
// prefix_transpose_a(const float* A, float* T, int m, int k), blocks of
// kNmSpmmTransposeThreads threads, one per kNmSpmmTransposeTile square
// tile of A: grid (ceil(k / tile), ceil(m / tile)).
inline constexpr int kNmSpmmTransposeTile = 64;
inline constexpr int kNmSpmmTransposeThreads = 256;
std::string nmSpmmTransposeKernelName(const std::string& prefix);

// The device code of one statement: the tiles' kernels for its N, M, L and
// A's layout (aKMajor: A stored k-major; the tiles that take it); for a
// row-major A also the transpose and the k-major kernels of the tiles that
// run on its transpose ("_at").
// With tensorCores, the tensorCores tiles' kernels instead of the others
// (A row-major).
std::string nmSpmmDeviceCode(int N, int M, int L, const std::string& prefix, bool aKMajor = false,
                             bool tensorCores = false);

}  // namespace tcc::lowering
