// The N:M SpMM device code (tcc/lowering/nm_spmm.h): one kernel template,
// instantiated per statement for its N, M, L and for each tile that fits.
#include <algorithm>
#include <sstream>

#include "nm_spmm.h"

namespace tcc::lowering {

namespace {

// A (m x k) and C (m x n) row-major; B' (w x q*L) row-major and D (w x q)
// as tcc/runtime/nm.h stores them. Per k-tile of KW windows, a CTA stages
// in shared memory
//   As[KS][BM + 4]   A's tile transposed (k-major), all KS = KW*M columns
//                    ("non-packing": no gather, the kept rows index it);
//   Bs[WS][BN]       B''s WS = KW*N kept rows, copied with cp.async;
//   Ds[WS][GT]       D's entries for the tile's kept rows and column groups.
// Two or three stages, all filled by cp.async: while the CTA computes on
// one, the next k-tiles arrive.
// Each thread keeps a TM x 8 tile of C in registers (TM = 8 or 16): rows
// rowA + 32h .. +3 for h < TM/4, columns col0..col0+3 and col0+16..+19. A warp's 32 columns
// lie in one column group when L is a multiple of 32, so then one index and
// one A fragment serve both column halves.
constexpr const char* kKernelTemplate = R"tcc(
#ifndef TCC_NM_SPMM_TEMPLATE
#define TCC_NM_SPMM_TEMPLATE
__device__ __forceinline__ void tcc_nm_cp_async16(void* shared, const void* global, int bytes) {
  unsigned address = (unsigned)__cvta_generic_to_shared(shared);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(bytes));
}
__device__ __forceinline__ void tcc_nm_cp_async4(void* shared, const void* global, int bytes) {
  unsigned address = (unsigned)__cvta_generic_to_shared(shared);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(address), "l"(global), "r"(bytes));
}
// Whole copies (no zero fill) for tiles that lie inside the operands.
__device__ __forceinline__ void tcc_nm_cp_async16_full(void* shared, const void* global) {
  unsigned address = (unsigned)__cvta_generic_to_shared(shared);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global));
}
__device__ __forceinline__ void tcc_nm_cp_async4_full(void* shared, const void* global) {
  unsigned address = (unsigned)__cvta_generic_to_shared(shared);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(address), "l"(global));
}
// Packing: whether column c is one of the used columns (a bit mask), and
// its rank among them.
__device__ __forceinline__ bool tcc_nm_used(const unsigned* used, int c) { return used[c >> 5] >> (c & 31) & 1u; }
__device__ __forceinline__ int tcc_nm_rank(const unsigned* used, int c) {
  int rank = __popc(used[c >> 5] & ((1u << (c & 31)) - 1u));
  for (int word = 0; word < (c >> 5); ++word) rank += __popc(used[word]);
  return rank;
}
__device__ __forceinline__ void tcc_nm_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// The mbarrier pipeline's steps (shared-memory addresses of 8-byte barriers).
__device__ __forceinline__ void tcc_nm_mbarrier_init(unsigned barrier, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(count) : "memory");
}
// Arrives on `barrier` once the thread's earlier cp.async copies have landed
// (the barrier's count includes this arrival: .noinc).
__device__ __forceinline__ void tcc_nm_cp_async_arrive(unsigned barrier) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(barrier) : "memory");
}
__device__ __forceinline__ void tcc_nm_mbarrier_arrive(unsigned barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}
__device__ __forceinline__ bool tcc_nm_mbarrier_try(unsigned barrier, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%1], %2;\n"
      "selp.u32 %0, 1, 0, done;\n"
      "}\n"
      : "=r"(done)
      : "r"(barrier), "r"(parity)
      : "memory");
  return done != 0;
}
// Returns once the barrier's phase of parity `parity` has completed. A
// wait of more than about 2^34 cycles (seconds) can only be a broken
// pipeline: the kernel traps, so that the launch fails instead of hanging.
__device__ __forceinline__ void tcc_nm_mbarrier_wait(unsigned barrier, unsigned parity) {
  if (tcc_nm_mbarrier_try(barrier, parity)) return;
  const long long start = clock64();
  while (!tcc_nm_mbarrier_try(barrier, parity))
    if (clock64() - start > (1ll << 34)) __trap();
}
template <int PENDING>
__device__ __forceinline__ void tcc_nm_cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING)); }

// Copies issued only where `on` holds (a predicate, not a branch: the
// spread fills sit between the multiply-adds of one basic block).
__device__ __forceinline__ void tcc_nm_cp_async16_if(unsigned shared, const void* global, bool on) {
  asm volatile(
      "{\n"
      ".reg .pred on;\n"
      "setp.ne.b32 on, %2, 0;\n"
      "@on cp.async.cg.shared.global [%0], [%1], 16;\n"
      "}\n" ::"r"(shared),
      "l"(global), "r"((int)on));
}
__device__ __forceinline__ void tcc_nm_cp_async4_if(unsigned shared, const void* global, bool on) {
  asm volatile(
      "{\n"
      ".reg .pred on;\n"
      "setp.ne.b32 on, %2, 0;\n"
      "@on cp.async.ca.shared.global [%0], [%1], 4;\n"
      "}\n" ::"r"(shared),
      "l"(global), "r"((int)on));
}
// Adds a float4 into C atomically (one vector reduction, sm_90).
__device__ __forceinline__ void tcc_nm_red_add4(float* out, float x, float y, float z, float w) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(out), "f"(x), "f"(y), "f"(z), "f"(w)
               : "memory");
}
// Programmatic dependent launch (sm_90): a kernel launched to overlap the
// one before it on the stream waits here until that one has finished and
// its writes are visible (returns at once in a launch without it); the one
// before lets it start early with griddepcontrol.launch_dependents.
__device__ __forceinline__ void tcc_nm_wait_for_previous_kernel() {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
}
// Thread block clusters (sm_90): the CTA's rank in its cluster and the
// cluster's size (1 and 1 in a launch without clusters), a barrier of all
// the cluster's threads (their shared-memory writes before it visible to
// the others' reads after it), and a float4 of another CTA's shared memory
// (`address` in this CTA's, the same offset in CTA `rank`'s).
__device__ __forceinline__ unsigned tcc_nm_cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}
__device__ __forceinline__ unsigned tcc_nm_cluster_size() {
  unsigned size;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(size));
  return size;
}
__device__ __forceinline__ void tcc_nm_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ float4 tcc_nm_cluster_load4(unsigned address, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(address), "r"(rank));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}
__device__ __forceinline__ void tcc_nm_mbarrier_inval(unsigned barrier) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(barrier) : "memory");
}

// STREAMK (mbarrier tiles): a persistent grid of G CTAs in one pipeline
// each, over the (tile of C, k-tile) steps, tiles in row-major order and
// each tile's k-tiles in order. CTA x first takes whole tiles x, x + G,
// ..., x + (W - 1) G, W = `atomic` (0 for none; so the tiles computed at
// once are neighbours, as in a launch of one CTA per tile, and share
// their rows of A and columns of B' in L2), then steps
// [S + x * tilesPerSplit, S + (x + 1) * tilesPerSplit) of the rest, S =
// G * W tiles' steps. A tile whose k-tiles a CTA computes only in
// part is added into C (zeroed before) atomically; the others are stored.
// W = 0 is stream-K proper; W > 0, whole tiles for the full waves and
// stream-K for the rest (a hybrid). No wave is left part empty.
// SPREAD: the copies of the k-tile being filled (where it lies inside A
// and B') are issued a few at a time between the kept rows of the
// computed k-tile (predicated copies in the unrolled loop), not in a burst
// before it.
// DCOLS: D's tile stored by column group (Ds[g][u] instead of Ds[u][g]),
// so that one 16-byte load gives four kept rows' indices.
// WHOLE (STREAMK): the kernel takes whole tiles first (W = `atomic`);
// without it W is 0 at compile time (stream-K proper: one range of steps,
// the two-range bookkeeping folded away, fewer live registers).
// DNEXT (the CTA-barrier pipeline): D's tile of k-tile t is copied with
// k-tile t - 1's fill, into a ring of STAGES + 1 slots, so that it has
// landed while k-tile t - 1 is computed: the first kept row's indices of
// the next k-tile are read into registers during the last kept row, and
// after the barrier the first loads of A go out at once (no D -> address
// -> load chain at the k-tile's start).
// PIPE: the kept rows' shared-memory loads written a row ahead of the
// multiply-adds (row r + 1's fragments loaded before row r's FMAs), so that
// ptxas keeps that order whatever registers it would otherwise give them.
// SHIFTA (with AKMAJOR): A's k-major tile has the pitch BM (a power of two),
// so a kept row's column of it, d * BM, is a shift instead of a multiply-add
// on the FMA pipe.
// AKMAJOR: A is stored k-major in global memory (A(i, kk) at kk * m + i),
// so each column of A's k-major shared tile is BM consecutive floats of
// one column of A, copied by 16 bytes (4-byte copies where m is not a
// multiple of 4). Not with AROWS (that tile is row-major in shared memory).
// CLUSTER (split-K without atomics): the grid's z splits of a tile of C
// run as one thread block cluster (launched with cluster dimensions
// (1, 1, splits)); each CTA writes its partial tile into its own shared
// memory, and after a cluster barrier each sums its share of the tile's
// float4s over all the cluster's CTAs (distributed shared memory, in rank
// order) and stores them into C: no zeroing launch, no atomics, the same
// sums in every run. In a launch without clusters it stores as usual.
template <int WARPS_M, int WARPS_N, int TM, int NN, int MM, int LL, int KW, int STAGES, bool PACK, bool AROWS, int CW,
          bool MBAR, bool STREAMK = false, bool SPREAD = false, bool DCOLS = false, bool WHOLE = false,
          bool DNEXT = false, bool AKMAJOR = false, bool PIPE = false, bool SHIFTA = false, bool CLUSTER = false>
__device__ __forceinline__ void tcc_nm_spmm_tile(const float* __restrict__ A, const float* __restrict__ B,
                                                 const int* __restrict__ D, float* __restrict__ C, int m, int n,
                                                 int k, int w, int q, int tilesPerSplit, int atomic) {
  constexpr int THREADS = WARPS_M * WARPS_N * 32;
  constexpr int BM = WARPS_M * 8 * TM, BN = WARPS_N * 32;  // TM rows of C per thread (8 or 16)
  constexpr int TM4 = TM / 4;
  constexpr int BM_SHIFT = BM == 128 ? 7 : BM == 64 ? 6 : BM == 32 ? 5 : 0;
  constexpr int KS = KW * MM, WS = KW * NN;
  // The k-tile's kept rows are computed in KW / CW chunks of CW windows:
  // unrolled within a chunk, a rolled loop over the chunks.
  static_assert(CW >= 1 && KW % CW == 0, "a k-tile is a whole number of chunks");
  constexpr int CHUNKS = KW / CW, CHUNK_ROWS = CW * NN;
  // A's tile k-major (As[KS][BM + 4], filled by 4-byte copies, read by
  // float4 along m), or with AROWS row-major (As[BM][KS + pad], filled by
  // 16-byte copies, read by one float per row). Both pitches are 4 mod 32:
  // the copies and the reads below hit distinct banks.
  // SHIFTA (a k-major A, 16-byte copies of whole columns): the pitch BM,
  // conflict-free for those copies and the float4 reads.
  constexpr int APITCH = AROWS ? ((KS + 27) / 32) * 32 + 4 : SHIFTA ? BM : BM + 4;
  static_assert(!SHIFTA || (AKMAJOR && (BM & (BM - 1)) == 0), "SHIFTA: a k-major A, a tile of a power-of-two rows");
  static_assert(!(AROWS && PACK), "the packing kernels copy A's tile by columns");
  static_assert(!(AROWS && AKMAJOR), "a k-major A is staged k-major");
  constexpr int GT = BN >= LL ? BN / LL : 1;
  constexpr int ROWS_PER_PASS = THREADS / 8;  // A's copies: 8 columns of THREADS / 8 rows per pass
  constexpr int ROW_PASSES = BM / ROWS_PER_PASS;
  static_assert(BM % ROWS_PER_PASS == 0 && KS % 8 == 0, "A's tile is copied in passes of 8 columns");
  constexpr int B_VECS = WS * BN / 4;
  constexpr int B_PER_THREAD = (B_VECS + THREADS - 1) / THREADS;
  constexpr int D_COUNT = WS * GT;
  constexpr int D_PER_THREAD = (D_COUNT + THREADS - 1) / THREADS;
  constexpr bool DCOLS_ON = DCOLS && !PACK && CHUNK_ROWS % 4 == 0;  // (WS, a multiple of CHUNK_ROWS, is then too)
  constexpr int A_STAGE = (AROWS ? BM : KS) * APITCH, B_STAGE = WS * BN;
  constexpr int A_VECS = BM * KS / 4;
  constexpr int A_VECS_PER_THREAD = (A_VECS + THREADS - 1) / THREADS;
  constexpr bool ONE_GROUP_PER_WARP = LL % 32 == 0;
  // AKMAJOR: whole tiles copied by a fixed number of 16-byte copies per
  // thread, a whole number of columns apart.
  constexpr bool A_WHOLE_KMAJOR = AKMAJOR && !PACK && THREADS % (BM / 4) == 0 && A_VECS % THREADS == 0;

  // Packing: A's tile holds only the columns some kept row of the tile
  // reads (col_info, found from D's tile as it arrives), so D runs a stage
  // ahead of A and B' in a ring of three, with a bit mask of the used
  // columns per stage.
  static_assert(!PACK || STAGES == 2, "the packing pipeline is double-buffered");
  constexpr bool DNEXT_ON = DNEXT && !PACK && !MBAR && !DCOLS_ON;
  static_assert(!DNEXT_ON || CHUNKS == 1, "the next k-tile's indices are read in the last kept row of one chunk");
  constexpr int D_SLOTS = PACK ? 3 : DNEXT_ON ? STAGES + 1 : STAGES;
  constexpr int MASK_WORDS = (KS + 31) / 32;

  extern __shared__ float4 tcc_nm_shared[];
  float* As = reinterpret_cast<float*>(tcc_nm_shared);
  float* Bs = As + STAGES * A_STAGE;
  int* Ds = reinterpret_cast<int*>(Bs + STAGES * B_STAGE);
  unsigned* usedColumns = reinterpret_cast<unsigned*>(Ds + D_SLOTS * D_COUNT);

  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int tx = lane & 3, ty = lane >> 2;
  const int warpM = warp / WARPS_N, warpN = warp % WARPS_N;
  static_assert(!STREAMK || MBAR, "stream-K runs on the mbarrier pipeline");
  const int np = q * LL;
  const int tilesTotal = (w / NN + KW - 1) / KW;
  // The tile of C whose k-tiles are being copied (under STREAMK it moves
  // on as the copies reach the next tile).
  int bm = STREAMK ? 0 : blockIdx.y * BM, bn = STREAMK ? 0 : blockIdx.x * BN;
  const int tileBegin = STREAMK ? 0 : blockIdx.z * tilesPerSplit;
  const int tileEnd = STREAMK ? 0 : min(tilesTotal, tileBegin + tilesPerSplit);
  int groupBase = bn / LL;
  const int col0 = warpN * 32 + tx * 4;
  // A column group of L divides or is divided by BN, and tiles start at
  // multiples of BN: the thread's groups within the tile do not depend on it.
  const int g0 = STREAMK ? col0 / LL : (bn + col0) / LL - groupBase;
  const int g1 = STREAMK ? (col0 + 16) / LL : (bn + col0 + 16) / LL - groupBase;
  // AROWS: the thread's rows are rowA + 8i (one float each from a row);
  // else rowA + 32h + 0..3 (a float4 of each k-major column).
  const int rowA = warpM * 8 * TM + ty * (AROWS ? 1 : 4);
  // The thread's share of A's copies: one column of 8, rows copyRow + p * ROWS_PER_PASS.
  const int copyRow = tid >> 3, copyCol = tid & 7;
  const float* aCopy = A + (long long)(bm + copyRow) * k + copyCol;
  const long long passStride = (long long)ROWS_PER_PASS * k;
  unsigned rowsValid = 0;
#pragma unroll
  for (int p = 0; p < ROW_PASSES; ++p)
    if (bm + copyRow + p * ROWS_PER_PASS < m) rowsValid |= 1u << p;
  bool rowsInside = bm + BM <= m;

  float acc[TM][8];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

  // K-tile `tile` into stage `stage`, all by cp.async (zero-filled outside
  // A, B' and D). A goes in transposed by 4-byte copies: 8 consecutive
  // columns of 4 rows per warp instruction, a full 32-byte sector per row
  // from global memory and 32 distinct banks in shared memory (the pitch is
  // 4 mod 32). The copy loops over columns stay rolled: unrolled, their
  // addresses would be kept in registers across the main loop and the
  // accumulators would spill.
  // A's tile; with `used` (packing), only the used columns, each at its
  // rank among them.
  // A k-tile that lies inside A (all BM rows, all KS columns) is copied by
  // whole, unpredicated copies whose addresses differ by constants (a few
  // instructions per k-tile); the tiles at the edges take the guarded loops.
  auto issueA = [&](int tile, int stage, const unsigned* used) {
    const int k0 = tile * KS;
    if constexpr (AKMAJOR) {
      // Column c of the tile is A[(k0 + c) * m + bm ...]: BM / 4 float4s,
      // copied in order (consecutive threads, consecutive 16 bytes).
      constexpr int COL_VECS = BM / 4;
      float* as = As + stage * A_STAGE;
      if constexpr (A_WHOLE_KMAJOR) {
        if (rowsInside && k0 + KS <= k && (m & 3) == 0) {
          constexpr int COL_STEP = THREADS / COL_VECS;  // columns between a thread's copies
          const int c0 = tid / COL_VECS, r0 = (tid % COL_VECS) * 4;
          float* target = as + c0 * APITCH + r0;
          const float* source = A + (long long)(k0 + c0) * m + bm + r0;
          const long long step = (long long)COL_STEP * m;
#pragma unroll
          for (int i = 0; i < A_VECS_PER_THREAD; ++i)
            tcc_nm_cp_async16_full(target + i * COL_STEP * APITCH, source + i * step);
          return;
        }
      }
      // At the edges (zero-filled past m and k), where m is not a multiple
      // of 4, and packing (only the used columns, each at its rank).
#pragma unroll 1
      for (int i = 0; i < A_VECS_PER_THREAD; ++i) {
        const int index = tid + i * THREADS;
        if (A_VECS % THREADS != 0 && index >= A_VECS) break;
        const int c = index / COL_VECS, r = (index % COL_VECS) * 4;
        int slot = c;
        if (PACK) {
          if (!tcc_nm_used(used, c)) continue;
          slot = tcc_nm_rank(used, c);
        }
        const int row = bm + r, col = k0 + c;
        float* target = as + slot * APITCH + r;
        const float* source = A + (long long)col * m + row;
        const int left = col < k ? m - row : 0;  // rows of A from row on
        if ((m & 3) == 0) {
          tcc_nm_cp_async16(target, left > 0 ? source : A, left > 0 ? 16 : 0);
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e) tcc_nm_cp_async4(target + e, left > e ? source + e : A, left > e ? 4 : 0);
        }
      }
      return;
    }
    if constexpr (!PACK && !AROWS) {
      if (rowsInside && k0 + KS <= k) {
        float* as = As + stage * A_STAGE + copyRow + copyCol * APITCH;
        const float* ap = aCopy + k0;
#pragma unroll
        for (int p = 0; p < ROW_PASSES; ++p) {
          const float* source = ap + p * passStride;
#pragma unroll
          for (int c8 = 0; c8 < KS; c8 += 8)
            tcc_nm_cp_async4_full(as + c8 * APITCH + p * ROWS_PER_PASS, source + c8);
        }
        return;
      }
    }
    if constexpr (AROWS && (KS % 4 == 0) && THREADS % (KS / 4) == 0 && A_VECS % THREADS == 0) {
      if (rowsInside && k0 + KS <= k && (k & 3) == 0) {
        constexpr int ROW_STEP = THREADS / (KS / 4);  // rows between a thread's copies
        const int r0 = tid / (KS / 4), c0 = (tid % (KS / 4)) * 4;
        float* target = As + stage * A_STAGE + r0 * APITCH + c0;
        const float* source = A + (long long)(bm + r0) * k + k0 + c0;
        const long long step = (long long)ROW_STEP * k;
#pragma unroll
        for (int i = 0; i < A_VECS_PER_THREAD; ++i)
          tcc_nm_cp_async16_full(target + i * ROW_STEP * APITCH, source + i * step);
        return;
      }
    }
    if constexpr (AROWS) {
      // Row-major: 16-byte copies of 4 columns (k a multiple of 4), else
      // one column at a time; zero-filled past m and k.
      float* as = As + stage * A_STAGE;
#pragma unroll 1
      for (int i = 0; i < A_VECS_PER_THREAD; ++i) {
        const int index = tid + i * THREADS;
        if (A_VECS % THREADS != 0 && index >= A_VECS) break;
        const int r = index / (KS / 4), c = (index % (KS / 4)) * 4;
        const int row = bm + r, col = k0 + c;
        float* target = as + r * APITCH + c;
        const float* source = A + (long long)row * k + col;
        const int left = row < m ? k - col : 0;  // columns of A from col on
        if ((k & 3) == 0) {
          tcc_nm_cp_async16(target, left > 0 ? source : A, left >= 4 ? 16 : left > 0 ? 4 * left : 0);
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e) tcc_nm_cp_async4(target + e, left > e ? source + e : A, left > e ? 4 : 0);
        }
      }
      return;
    }
    float* as = As + stage * A_STAGE + copyRow;
    const float* ap = aCopy + k0;
#pragma unroll 1
    for (int c8 = 0; c8 < KS; c8 += 8) {
      const int c = c8 + copyCol;
      int slot = c;
      if (PACK) {
        if (!tcc_nm_used(used, c)) continue;
        slot = tcc_nm_rank(used, c);
      }
      const bool columnValid = k0 + c < k;
#pragma unroll
      for (int p = 0; p < ROW_PASSES; ++p) {
        const bool valid = columnValid && (rowsValid >> p & 1u);
        tcc_nm_cp_async4(as + slot * APITCH + p * ROWS_PER_PASS, valid ? ap + c8 + p * passStride : A, valid ? 4 : 0);
      }
    }
  };
  auto issueB = [&](int tile, int stage) {
    const int u0 = tile * WS;
    float* bs = Bs + stage * B_STAGE;
    if constexpr (THREADS % (BN / 4) == 0 && B_VECS % THREADS == 0) {
      if (u0 + WS <= w && bn + BN <= np) {
        constexpr int ROW_STEP = THREADS / (BN / 4);
        const int r0 = tid / (BN / 4), c0 = (tid % (BN / 4)) * 4;
        const float* source = B + (long long)(u0 + r0) * np + bn + c0;
        const long long step = (long long)ROW_STEP * np;
#pragma unroll
        for (int i = 0; i < B_PER_THREAD; ++i)
          tcc_nm_cp_async16_full(bs + (r0 + i * ROW_STEP) * BN + c0, source + i * step);
        return;
      }
    }
#pragma unroll 1
    for (int i = 0; i < B_PER_THREAD; ++i) {
      const int index = tid + i * THREADS;
      if (B_VECS % THREADS == 0 || index < B_VECS) {
        const int uu = index / (BN / 4), c = (index % (BN / 4)) * 4;
        const int u = u0 + uu, col = bn + c;
        const bool valid = u < w && col < np;
        tcc_nm_cp_async16(bs + uu * BN + c, valid ? B + (long long)u * np + col : B, valid ? 16 : 0);
      }
    }
  };
  auto issueD = [&](int tile, int slot) {
    const int u0 = tile * WS;
    int* ds = Ds + slot * D_COUNT;
#pragma unroll 1
    for (int i = 0; i < D_PER_THREAD; ++i) {
      const int index = tid + i * THREADS;
      if (index < D_COUNT) {
        const int u = u0 + index / GT, g = groupBase + index % GT;
        const bool valid = u < w && g < q;
        int* target = DCOLS_ON ? ds + (index % GT) * WS + index / GT : ds + index;
        tcc_nm_cp_async4(target, valid ? D + (long long)u * q + g : D, valid ? 4 : 0);
      }
    }
  };
  // Packing: marks the columns D's tile in `slot` reads (after a barrier
  // the mask is complete), then turns each of the thread's entries of D
  // into its column's rank.
  auto markUsed = [&](int slot, unsigned* used) {
    const int* ds = Ds + slot * D_COUNT;
#pragma unroll 1
    for (int i = 0; i < D_PER_THREAD; ++i) {
      const int index = tid + i * THREADS;
      if (index < D_COUNT) {
        const int c = (index / GT / NN) * MM + ds[index];
        atomicOr(&used[c >> 5], 1u << (c & 31));
      }
    }
  };
  auto rankEntries = [&](int slot, const unsigned* used) {
    int* ds = Ds + slot * D_COUNT;
#pragma unroll 1
    for (int i = 0; i < D_PER_THREAD; ++i) {
      const int index = tid + i * THREADS;
      if (index < D_COUNT) {
        const int c = (index / GT / NN) * MM + ds[index];
        ds[index] = tcc_nm_rank(used, c) - (index / GT / NN) * MM;  // compute adds the window's first column back
      }
    }
  };
  // DNEXT: the first kept row's indices of the k-tile computed next.
  int dNext0 = 0, dNext1 = 0;
  (void)dNext0, (void)dNext1;
  auto readNextIndices = [&](int slot) {
    const int* dn = Ds + slot * D_COUNT;
    dNext0 = dn[g0];
    dNext1 = ONE_GROUP_PER_WARP ? dNext0 : dn[g1];
  };
  // `between(chunk, r)` runs after kept row r of each chunk (the spread copies).
  // PIPE: kept row uu's operands, A's fragments for the thread's rows (a1
  // for its second column group) and B''s 8 values.
  struct Row {
    float a0[TM], a1[TM], b[8];
  };
  // Kept row index d's column of A's tile, in floats from its window's first.
  // (SHIFTA only.)
  auto columnOffset = [](int d) { return d << BM_SHIFT; };
  auto compute = [&](int stage, int slot, auto between) {
    const float* as = As + stage * A_STAGE + rowA * (AROWS ? APITCH : 1);
    const float* bs = Bs + stage * B_STAGE + col0;
    const int* ds = Ds + slot * D_COUNT;
    int4 d4g0 = make_int4(0, 0, 0, 0), d4g1 = d4g0;  // DCOLS: four kept rows' indices
    (void)d4g0, (void)d4g1;
    if constexpr (PIPE) {
      // Rows are loaded in order (DCOLS keeps four rows' indices, DNEXT reads
      // the next k-tile's first ones with the last row).
      auto load = [&](int chunk, int r, Row& row) {
        const int uu = chunk * CHUNK_ROWS + r;
        // Kept row uu of the tile reads A's column (its window's first + D).
        int d0, d1;
        if constexpr (DCOLS_ON) {
          if (r % 4 == 0) {
            d4g0 = *reinterpret_cast<const int4*>(ds + g0 * WS + uu);
            if (!ONE_GROUP_PER_WARP) d4g1 = *reinterpret_cast<const int4*>(ds + g1 * WS + uu);
          }
          d0 = r % 4 == 0 ? d4g0.x : r % 4 == 1 ? d4g0.y : r % 4 == 2 ? d4g0.z : d4g0.w;
          d1 = r % 4 == 0 ? d4g1.x : r % 4 == 1 ? d4g1.y : r % 4 == 2 ? d4g1.z : d4g1.w;
        } else if (DNEXT_ON && uu == 0) {
          d0 = dNext0, d1 = dNext1;
        } else {
          d0 = ds[uu * GT + g0];
          d1 = ONE_GROUP_PER_WARP ? d0 : ds[uu * GT + g1];
        }
        if (DNEXT_ON && uu == WS - 1) readNextIndices(slot + 1 == D_SLOTS ? 0 : slot + 1);
        constexpr int COLUMN = AROWS ? 1 : APITCH;  // distance between A's columns in As
        const float* window = as + (chunk * CW + r / NN) * MM * COLUMN;
        const float* a0p = window + (SHIFTA ? columnOffset(d0) : d0 * COLUMN);
        const float4 b0 = *reinterpret_cast<const float4*>(bs + uu * BN);
        const float4 b1 = *reinterpret_cast<const float4*>(bs + uu * BN + 16);
        auto fragment = [&](const float* p, float* a) {
          if constexpr (AROWS) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = p[8 * i * APITCH];
          } else {
#pragma unroll
            for (int h = 0; h < TM4; ++h) {
              const float4 v = *reinterpret_cast<const float4*>(p + 32 * h);
              a[4 * h] = v.x, a[4 * h + 1] = v.y, a[4 * h + 2] = v.z, a[4 * h + 3] = v.w;
            }
          }
        };
        fragment(a0p, row.a0);
        if (ONE_GROUP_PER_WARP) {
#pragma unroll
          for (int i = 0; i < TM; ++i) row.a1[i] = row.a0[i];
        } else {
          fragment(window + (SHIFTA ? columnOffset(d1) : d1 * COLUMN), row.a1);
        }
        row.b[0] = b0.x, row.b[1] = b0.y, row.b[2] = b0.z, row.b[3] = b0.w;
        row.b[4] = b1.x, row.b[5] = b1.y, row.b[6] = b1.z, row.b[7] = b1.w;
      };
      auto multiplyAdd = [&](const Row& row) {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            acc[i][j] = fmaf(row.a0[i], row.b[j], acc[i][j]);
            acc[i][4 + j] = fmaf(row.a1[i], row.b[4 + j], acc[i][4 + j]);
          }
        }
      };
      // Row r + 1's loads written before row r's multiply-adds (two named
      // rows, no array indexed by r, so they stay in registers).
#pragma unroll 1
      for (int chunk = 0; chunk < CHUNKS; ++chunk) {
        Row even, odd;
        load(chunk, 0, even);
#pragma unroll
        for (int r = 0; r < CHUNK_ROWS; r += 2) {
          if (r + 1 < CHUNK_ROWS) load(chunk, r + 1, odd);
          multiplyAdd(even);
          between(chunk, r);
          if (r + 1 < CHUNK_ROWS) {
            if (r + 2 < CHUNK_ROWS) load(chunk, r + 2, even);
            multiplyAdd(odd);
            between(chunk, r + 1);
          }
        }
      }
    } else {
      // Without PIPE the same loads, each row's before its multiply-adds
      // (written out here, not through Row: the 8-row tiles, at their 128
      // registers, spilled when the PTX's order changed by that much).
#pragma unroll 1
      for (int chunk = 0; chunk < CHUNKS; ++chunk)
#pragma unroll
      for (int r = 0; r < CHUNK_ROWS; ++r) {
        const int uu = chunk * CHUNK_ROWS + r;
        // Kept row uu of the tile reads A's column (its window's first + D).
        int d0, d1;
        if constexpr (DCOLS_ON) {
          if (r % 4 == 0) {
            d4g0 = *reinterpret_cast<const int4*>(ds + g0 * WS + uu);
            if (!ONE_GROUP_PER_WARP) d4g1 = *reinterpret_cast<const int4*>(ds + g1 * WS + uu);
          }
          d0 = r % 4 == 0 ? d4g0.x : r % 4 == 1 ? d4g0.y : r % 4 == 2 ? d4g0.z : d4g0.w;
          d1 = r % 4 == 0 ? d4g1.x : r % 4 == 1 ? d4g1.y : r % 4 == 2 ? d4g1.z : d4g1.w;
        } else if (DNEXT_ON && uu == 0) {
          d0 = dNext0, d1 = dNext1;
        } else {
          d0 = ds[uu * GT + g0];
          d1 = ONE_GROUP_PER_WARP ? d0 : ds[uu * GT + g1];
        }
        if (DNEXT_ON && uu == WS - 1) readNextIndices(slot + 1 == D_SLOTS ? 0 : slot + 1);
        constexpr int COLUMN = AROWS ? 1 : APITCH;  // distance between A's columns in As
        const float* window = as + (chunk * CW + r / NN) * MM * COLUMN;
        const float* a0p = window + (SHIFTA ? columnOffset(d0) : d0 * COLUMN);
        const float4 b0 = *reinterpret_cast<const float4*>(bs + uu * BN);
        const float4 b1 = *reinterpret_cast<const float4*>(bs + uu * BN + 16);
        float a0[TM], a1[TM];
        auto fragment = [&](const float* p, float* a) {
          if constexpr (AROWS) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = p[8 * i * APITCH];
          } else {
#pragma unroll
            for (int h = 0; h < TM4; ++h) {
              const float4 v = *reinterpret_cast<const float4*>(p + 32 * h);
              a[4 * h] = v.x, a[4 * h + 1] = v.y, a[4 * h + 2] = v.z, a[4 * h + 3] = v.w;
            }
          }
        };
        fragment(a0p, a0);
        if (ONE_GROUP_PER_WARP) {
#pragma unroll
          for (int i = 0; i < TM; ++i) a1[i] = a0[i];
        } else {
          fragment(window + (SHIFTA ? columnOffset(d1) : d1 * COLUMN), a1);
        }
        const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < TM; ++i) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            acc[i][j] = fmaf(a0[i], b[j], acc[i][j]);
            acc[i][4 + j] = fmaf(a1[i], b[4 + j], acc[i][4 + j]);
          }
        }
        between(chunk, r);
      }
    }
  };
  auto nothing = [](int, int) {};

  // SPREAD: a fill's copies of A and B' are numbered (A's first) and
  // issued PER_ROW at a time after the first SPREAD_ROWS kept rows; D's
  // few guarded copies go first. A fill that is not whole (at the edges of
  // A or B') is issued at once as without SPREAD.
  constexpr int AHEAD = MBAR ? STAGES - 2 : STAGES - 1;  // k-tiles copied ahead of the computed one
  constexpr bool A_WHOLE_K = !PACK && !AROWS && !AKMAJOR;
  constexpr bool A_WHOLE_ROWS = AROWS && KS % 4 == 0 && THREADS % (KS / 4) == 0 && A_VECS % THREADS == 0;
  constexpr bool B_WHOLE = THREADS % (BN / 4) == 0 && B_VECS % THREADS == 0;
  constexpr int A_ITEMS = A_WHOLE_K ? ROW_PASSES * (KS / 8) : A_VECS_PER_THREAD;
  constexpr int ITEMS = A_ITEMS + B_PER_THREAD;
  // (Spread fills need copies of whole tiles by a fixed number per thread;
  // other shapes fill at once.) A rolled k-tile spreads them over its
  // first chunk.
  constexpr bool SPREAD_ON = SPREAD && !PACK && (A_WHOLE_K || A_WHOLE_ROWS || A_WHOLE_KMAJOR) && B_WHOLE;
  // With one k-tile ahead (three mbarrier stages) the copies go in the
  // first half of the step, so that they have half a step to land.
  constexpr int SPREAD_ROWS = AHEAD < 2 && CHUNKS == 1 ? (CHUNK_ROWS + 1) / 2 : CHUNK_ROWS;
  constexpr int PER_ROW = (ITEMS + SPREAD_ROWS - 1) / SPREAD_ROWS;
  bool spreadOn = false;
  unsigned aTarget = 0, bTarget = 0;
  const float* aSource = A;
  const float* bSource = B;
  // Whether k-tile `tile` into `stage` can be spread (then the copies'
  // bases are set).
  auto spreadBegin = [&](int tile, int stage) {
    const int k0 = tile * KS, u0 = tile * WS;
    if (!rowsInside || k0 + KS > k || (AROWS && (k & 3) != 0) || (AKMAJOR && (m & 3) != 0) || u0 + WS > w ||
        bn + BN > np)
      return false;
    if constexpr (A_WHOLE_KMAJOR) {
      const int c0 = tid / (BM / 4), r0 = (tid % (BM / 4)) * 4;
      aTarget = (unsigned)__cvta_generic_to_shared(As + stage * A_STAGE + c0 * APITCH + r0);
      aSource = A + (long long)(k0 + c0) * m + bm + r0;
    } else if constexpr (A_WHOLE_K) {
      aTarget = (unsigned)__cvta_generic_to_shared(As + stage * A_STAGE + copyRow + copyCol * APITCH);
      aSource = aCopy + k0;
    } else {
      const int r0 = tid / (KS / 4), c0 = (tid % (KS / 4)) * 4;
      aTarget = (unsigned)__cvta_generic_to_shared(As + stage * A_STAGE + r0 * APITCH + c0);
      aSource = A + (long long)(bm + r0) * k + k0 + c0;
    }
    const int r0 = tid / (BN / 4), c0 = (tid % (BN / 4)) * 4;
    bTarget = (unsigned)__cvta_generic_to_shared(Bs + stage * B_STAGE + r0 * BN + c0);
    bSource = B + (long long)(u0 + r0) * np + bn + c0;
    return true;
  };
  auto spreadItem = [&](int item, bool on) {
    if (item < A_ITEMS) {
      if constexpr (A_WHOLE_KMAJOR) {
        constexpr int COL_STEP = THREADS / (BM / 4);
        tcc_nm_cp_async16_if(aTarget + 4 * item * COL_STEP * APITCH, aSource + item * (long long)COL_STEP * m, on);
      } else if constexpr (A_WHOLE_K) {
        const int p = item / (KS / 8), c8 = (item % (KS / 8)) * 8;
        tcc_nm_cp_async4_if(aTarget + 4 * (c8 * APITCH + p * ROWS_PER_PASS), aSource + p * passStride + c8, on);
      } else {
        constexpr int ROW_STEP = THREADS / (KS / 4);
        tcc_nm_cp_async16_if(aTarget + 4 * item * ROW_STEP * APITCH, aSource + item * (long long)ROW_STEP * k, on);
      }
    } else if (item < ITEMS) {
      constexpr int ROW_STEP = THREADS / (BN / 4);
      const int i = item - A_ITEMS;
      tcc_nm_cp_async16_if(bTarget + 4 * i * ROW_STEP * BN, bSource + i * (long long)ROW_STEP * np, on);
    }
  };
  auto spreadCopies = [&](int chunk, int r) {
    if (r < SPREAD_ROWS) {
      const bool on = spreadOn && (CHUNKS == 1 || chunk == 0);
#pragma unroll
      for (int j = 0; j < PER_ROW; ++j) spreadItem(r * PER_ROW + j, on);
    }
  };
  // K-tile `tile` into `stage`: spread over the computation (spreadOn), or at once.
  auto fillStage = [&](int tile, int stage) {
    spreadOn = SPREAD_ON && spreadBegin(tile, stage);
    if (!spreadOn) {
      issueA(tile, stage, nullptr);
      issueB(tile, stage);
    }
    if (!DNEXT_ON)
      issueD(tile, stage);
    else if (tile + 1 < tileEnd)
      issueD(tile + 1, (tile + 1 - tileBegin) % D_SLOTS);
  };
  auto computeFilling = [&](int stage, int slot) {
    if constexpr (SPREAD_ON)
      compute(stage, slot, spreadCopies);
    else
      compute(stage, slot, nothing);
  };

  // C's tile at (tileM, tileN): float4 stores where the row allows; with
  // `add` (split-K, or a stream-K tile computed in part) added atomically,
  // by float4 reductions where the row allows.
  auto storeC = [&](int tileM, int tileN, bool add) {
    // Launched to overlap the kernel that zeroes C (split-K, stream-K): C
    // is written only once that kernel has finished (at once otherwise).
    tcc_nm_wait_for_previous_kernel();
    const bool cVector = (n & 3) == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int row = tileM + rowA + (AROWS ? 8 * i : (i / 4) * 32 + i % 4);
      if (row >= m) continue;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int col = tileN + col0 + half * 16;
        float* out = C + (long long)row * n + col;
        const float* value = &acc[i][half * 4];
        if (cVector && col + 3 < n) {
          if (add)
            tcc_nm_red_add4(out, value[0], value[1], value[2], value[3]);
          else
            *reinterpret_cast<float4*>(out) = make_float4(value[0], value[1], value[2], value[3]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (col + j < n) {
              if (add)
                atomicAdd(out + j, value[j]);
              else
                out[j] = value[j];
            }
        }
      }
    }
  };

  if constexpr (MBAR) {
    // No CTA barrier in the loop: full[s] completes when every thread's
    // copies into stage s have landed, empty[s] when every thread has
    // computed on it. A stage is refilled two steps after it was computed
    // (STAGES - 2 k-tiles ahead of the computed one), so a thread rarely
    // waits for the slowest one to finish the step before.
    static_assert(!PACK && STAGES >= 3, "the mbarrier pipeline has three or more stages and does not pack");
    const unsigned full = ((unsigned)__cvta_generic_to_shared(Ds + STAGES * D_COUNT) + 7u) & ~7u;
    const unsigned empty = full + 8 * STAGES;
    if (tid == 0) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        tcc_nm_mbarrier_init(full + 8 * s, THREADS);
        tcc_nm_mbarrier_init(empty + 8 * s, THREADS);
      }
    }
    __syncthreads();
    // The CTA's steps: its k-tiles of its tile of C; under STREAMK the
    // steps of its whole tiles (wholeSteps of them, tiles G apart), then
    // its share of the rest [second, second + total - wholeSteps). The
    // copies run AHEAD steps ahead of the computation (step v's fill is
    // step v + AHEAD's k-tile), across tiles and from one range into the
    // next.
    int total = tileEnd - tileBegin;
    int second = 0, wholeSteps = 0;  // STREAMK
    const int tilesN = (n + BN - 1) / BN;
    if constexpr (STREAMK) {
      const int tiles = ((m + BM - 1) / BM) * tilesN, wholeTiles = WHOLE ? min(tiles, (int)gridDim.x * atomic) : 0;
      wholeSteps = ((int)blockIdx.x < wholeTiles ? (wholeTiles - 1 - (int)blockIdx.x) / (int)gridDim.x + 1 : 0) *
                   tilesTotal;
      const int steps = tiles * tilesTotal;
      second = min(steps, wholeTiles * tilesTotal + (int)blockIdx.x * tilesPerSplit);
      total = wholeSteps + min(steps, second + tilesPerSplit) - second;
    }
    // STREAMK: the next tile of the range that step v is in.
    auto tileAfter = [&](int v, int tileOfC) { return v < wholeSteps ? tileOfC + (int)gridDim.x : tileOfC + 1; };
    // STREAMK: the copies' tile of C and k-tile (else the k-tile is
    // tileBegin + the step).
    int fillTile = 0, fillK = 0;
    auto copiesAt = [&](int tileOfC) {
      bm = (tileOfC / tilesN) * BM, bn = (tileOfC % tilesN) * BN;
      groupBase = bn / LL;
      aCopy = A + (long long)(bm + copyRow) * k + copyCol;
      rowsValid = 0;
#pragma unroll
      for (int p = 0; p < ROW_PASSES; ++p)
        if (bm + copyRow + p * ROWS_PER_PASS < m) rowsValid |= 1u << p;
      rowsInside = bm + BM <= m;
    };
    auto copiesFrom = [&](int step) {
      fillTile = step / tilesTotal, fillK = step - fillTile * tilesTotal;
      copiesAt(fillTile);
    };
    if constexpr (STREAMK)
      if (total > 0) copiesFrom(wholeSteps > 0 ? (int)blockIdx.x * tilesTotal : second);
    // The k-tile that the fill of step v copies, and moving on from it.
    auto fillTileOf = [&](int v) { return STREAMK ? fillK : tileBegin + v + AHEAD; };
    auto nextCopy = [&](int v) {
      if constexpr (STREAMK) {
        const int filledStep = v + AHEAD;  // the step whose k-tile was just copied
        if (filledStep + 1 == wholeSteps && filledStep + 1 < total)
          copiesFrom(second);
        else if (++fillK == tilesTotal)
          fillK = 0, fillTile = tileAfter(filledStep, fillTile), copiesAt(fillTile);
      }
    };
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
      if (s < total) {
        const int kTileOf = STREAMK ? fillK : tileBegin + s;
        issueA(kTileOf, s, nullptr);
        issueB(kTileOf, s);
        issueD(kTileOf, s);
        tcc_nm_cp_async_arrive(full + 8 * s);
        nextCopy(s - AHEAD);
      }
    }
    // STREAMK: the computed step's tile and k-tile, and whether this CTA
    // computes the tile from its first k-tile.
    int tile = 0, kTile = 0;
    auto computesFrom = [&](int step) { tile = step / tilesTotal, kTile = step - tile * tilesTotal; };
    if constexpr (STREAMK)
      if (total > 0) computesFrom(wholeSteps > 0 ? (int)blockIdx.x * tilesTotal : second);
    bool fromFirst = kTile == 0;
    // The stage filled at step s is (s + AHEAD) % STAGES, for the
    // ((s + AHEAD) / STAGES)-th time; the one computed is s % STAGES, in
    // phase (s / STAGES) & 1. Counted, not divided, step by step.
    int filled = AHEAD, fillUse = 0, stage = 0;
    unsigned phase = 0;
    for (int v = 0; v < total; ++v) {
      // The fill: issued before the computation, or under SPREAD_ON between
      // its kept rows (then it arrives on full[] after it).
      const int spreadStage = filled;
      if (v + AHEAD < total) {
        // Its fillUse-th fill: the (fillUse - 1)-th computation on it must be over.
        if (fillUse > 0) tcc_nm_mbarrier_wait(empty + 8 * filled, (fillUse - 1) & 1);
        fillStage(fillTileOf(v), filled);
        if (!SPREAD_ON) {
          tcc_nm_cp_async_arrive(full + 8 * filled);
          nextCopy(v);
        }
      } else {
        spreadOn = false;
      }
      if (++filled == STAGES) filled = 0, ++fillUse;
      tcc_nm_mbarrier_wait(full + 8 * stage, phase);
      computeFilling(stage, stage);
      if (SPREAD_ON && v + AHEAD < total) {
        tcc_nm_cp_async_arrive(full + 8 * spreadStage);
        nextCopy(v);
      }
      tcc_nm_mbarrier_arrive(empty + 8 * stage);
      if (++stage == STAGES) stage = 0, phase ^= 1u;
      if constexpr (STREAMK) {
        const bool tileDone = kTile == tilesTotal - 1, rangeDone = v + 1 == wholeSteps || v + 1 == total;
        if (tileDone || rangeDone) {
          storeC((tile / tilesN) * BM, (tile % tilesN) * BN, !(fromFirst && tileDone));
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
          tile = tileAfter(v, tile), kTile = 0, fromFirst = true;
          if (v + 1 == wholeSteps && v + 1 < total) computesFrom(second), fromFirst = kTile == 0;
        } else {
          ++kTile;
        }
      }
    }
    if constexpr (CLUSTER) {
      // The partial tile below may overwrite the barriers: they are done.
      __syncthreads();
      if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
          tcc_nm_mbarrier_inval(full + 8 * s);
          tcc_nm_mbarrier_inval(empty + 8 * s);
        }
      }
    }
  } else if constexpr (!PACK) {
    // STAGES - 1 k-tiles in flight ahead of the one computed.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (tileBegin + s < tileEnd) {
        issueA(tileBegin + s, s, nullptr);
        issueB(tileBegin + s, s);
        if (!DNEXT_ON) {
          issueD(tileBegin + s, s);
        } else {
          if (s == 0) issueD(tileBegin, 0);
          if (tileBegin + s + 1 < tileEnd) issueD(tileBegin + s + 1, (s + 1) % D_SLOTS);
        }
      }
      tcc_nm_cp_async_commit();
    }
    for (int tile = tileBegin; tile < tileEnd; ++tile) {
      const int step = tile - tileBegin;
      tcc_nm_cp_async_wait<STAGES - 2>();
      __syncthreads();
      if (DNEXT_ON && step == 0) readNextIndices(0);
      spreadOn = false;
      if (tile + STAGES - 1 < tileEnd) fillStage(tile + STAGES - 1, (step + STAGES - 1) % STAGES);
      if (!SPREAD_ON) tcc_nm_cp_async_commit();
      computeFilling(step % STAGES, DNEXT_ON ? step % D_SLOTS : step % STAGES);
      if (SPREAD_ON) tcc_nm_cp_async_commit();
    }
  } else {
    // Step s computes k-tile s from stage s % 2 and D's slot s % 3, while
    // k-tile s + 1's A and B' (packed by its D, which arrived a step before)
    // and k-tile s + 2's D arrive.
    if (tid < 2 * MASK_WORDS) usedColumns[tid] = 0u;
    if (tileBegin < tileEnd) issueD(tileBegin, 0);
    tcc_nm_cp_async_commit();
    tcc_nm_cp_async_wait<0>();
    __syncthreads();
    if (tileBegin < tileEnd) markUsed(0, usedColumns);
    __syncthreads();
    if (tileBegin < tileEnd) {
      issueA(tileBegin, 0, usedColumns);
      rankEntries(0, usedColumns);
      issueB(tileBegin, 0);
      if (tileBegin + 1 < tileEnd) issueD(tileBegin + 1, 1);
    }
    tcc_nm_cp_async_commit();
    for (int tile = tileBegin; tile < tileEnd; ++tile) {
      const int step = tile - tileBegin;
      const bool next = tile + 1 < tileEnd;
      unsigned* usedNext = usedColumns + ((step + 1) & 1) * MASK_WORDS;
      tcc_nm_cp_async_wait<0>();
      __syncthreads();
      // The mask of k-tile s + 2 (that of k-tile s, read last step) is cleared
      // here; k-tile s + 1's is complete after the barrier below.
      if (tid < MASK_WORDS) usedColumns[(step & 1) * MASK_WORDS + tid] = 0u;
      if (next) markUsed((step + 1) % 3, usedNext);
      __syncthreads();
      if (next) {
        issueA(tile + 1, (step + 1) & 1, usedNext);
        rankEntries((step + 1) % 3, usedNext);
        issueB(tile + 1, (step + 1) & 1);
        if (tile + 2 < tileEnd) issueD(tile + 2, (step + 2) % 3);
      }
      tcc_nm_cp_async_commit();
      compute(step & 1, step % 3, nothing);
    }
  }
  tcc_nm_cp_async_wait<0>();

  // C's tile (under split-K added atomically, by float4 where the row allows).
  if constexpr (CLUSTER && !STREAMK && !PACK) {
    const unsigned ranks = tcc_nm_cluster_size();
    if (ranks > 1) {
      // The partial tile, row-major with a pitch of BN + 4 floats (a warp's
      // float4 writes then fall on distinct banks in each wavefront), over
      // the stages (every copy has landed and every warp computed).
      constexpr int PITCH = BN + 4;
      float* part = reinterpret_cast<float*>(tcc_nm_shared);
      __syncthreads();
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int row = rowA + (AROWS ? 8 * i : (i / 4) * 32 + i % 4);
#pragma unroll
        for (int half = 0; half < 2; ++half)
          *reinterpret_cast<float4*>(part + row * PITCH + col0 + half * 16) =
              make_float4(acc[i][half * 4], acc[i][half * 4 + 1], acc[i][half * 4 + 2], acc[i][half * 4 + 3]);
      }
      tcc_nm_cluster_sync();
      // This CTA's share: float4s [begin, end) of the tile in row-major order.
      constexpr int VECS = BM * BN / 4;
      const unsigned rank = tcc_nm_cluster_rank();
      const int share = (VECS + (int)ranks - 1) / (int)ranks;
      const int begin = (int)rank * share, end = min(VECS, begin + share);
      const unsigned base = (unsigned)__cvta_generic_to_shared(part);
      const bool cVector = (n & 3) == 0;
#pragma unroll 1
      for (int e = begin + tid; e < end; e += THREADS) {
        const int row = e / (BN / 4), c = (e % (BN / 4)) * 4;
        const unsigned address = base + 4u * (unsigned)(row * PITCH + c);
        // Up to 8 CTAs' loads issued before their sums (added in rank order).
        float4 v[8];
#pragma unroll
        for (int r = 0; r < 8; ++r)
          if (r < (int)ranks) v[r] = tcc_nm_cluster_load4(address, (unsigned)r);
        float4 sum = v[0];
#pragma unroll
        for (int r = 1; r < 8; ++r)
          if (r < (int)ranks) sum.x += v[r].x, sum.y += v[r].y, sum.z += v[r].z, sum.w += v[r].w;
        const int gRow = bm + row, gCol = bn + c;
        if (gRow >= m) continue;
        float* out = C + (long long)gRow * n + gCol;
        if (cVector && gCol + 3 < n) {
          *reinterpret_cast<float4*>(out) = sum;
        } else {
          const float value[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (gCol + j < n) out[j] = value[j];
        }
      }
      // No CTA leaves (and frees its shared memory) while another reads it.
      tcc_nm_cluster_sync();
      return;
    }
  }
  if constexpr (!STREAMK) storeC(bm, bn, atomic != 0);
}
#endif
)tcc";

// T (k x m) = A (m x k) transposed, for the plans that run a row-major A
// through a k-major kernel: each block moves a 64 x 64 tile of A through
// shared memory (pitch 65), reading A's rows and writing T's by float4
// (where m and k are multiples of 4 and both arrays 16-byte aligned; else
// by floats). A warp covers 4 rows of 8 float4s, both ways, so its shared
// stores and loads hit 32 distinct banks.
std::string transposeKernel(const std::string& prefix) {
  static_assert(kNmSpmmTransposeTile == 64 && kNmSpmmTransposeThreads == 256, "the kernel below");
  return "extern \"C\" __global__ void __launch_bounds__(256) " + nmSpmmTransposeKernelName(prefix) +
         R"tcc((const float* __restrict__ A, float* __restrict__ T, int m, int k) {
  // A kernel launched to overlap this one (the k-major kernel, or the
  // zeroing before it) may start as SMs free up; it waits for this one
  // before it reads T.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  __shared__ float tile[64][65];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int c4 = (lane & 7) + 8 * (warp & 1), r = (lane >> 3) + 4 * (warp >> 1);
  const int i0 = blockIdx.y * 64, k0 = blockIdx.x * 64;
  const bool vec = ((m | k) & 3) == 0 && ((reinterpret_cast<unsigned long long>(A) |
                                           reinterpret_cast<unsigned long long>(T)) & 15) == 0;
  float4 v[4];
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    const int i = i0 + r + 16 * p, kk = k0 + 4 * c4;
    v[p] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (i >= m || kk >= k) continue;
    const float* source = A + (long long)i * k + kk;
    if (vec) {
      v[p] = *reinterpret_cast<const float4*>(source);
    } else {
      v[p].x = source[0];
      if (kk + 1 < k) v[p].y = source[1];
      if (kk + 2 < k) v[p].z = source[2];
      if (kk + 3 < k) v[p].w = source[3];
    }
  }
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    float* row = tile[r + 16 * p] + 4 * c4;
    row[0] = v[p].x, row[1] = v[p].y, row[2] = v[p].z, row[3] = v[p].w;
  }
  __syncthreads();
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    const int column = r + 16 * p, kk = k0 + column, i = i0 + 4 * c4;
    if (kk >= k || i >= m) continue;
    const float4 out = make_float4(tile[4 * c4][column], tile[4 * c4 + 1][column], tile[4 * c4 + 2][column],
                                   tile[4 * c4 + 3][column]);
    float* target = T + (long long)kk * m + i;
    if (vec) {
      *reinterpret_cast<float4*>(target) = out;
    } else {
      target[0] = out.x;
      if (i + 1 < m) target[1] = out.y;
      if (i + 2 < m) target[2] = out.z;
      if (i + 3 < m) target[3] = out.w;
    }
  }
}
)tcc";
}

}  // namespace

std::string nmSpmmDeviceCode(int N, int M, int L, const std::string& prefix, bool aKMajor, bool tensorCores) {
  std::ostringstream out;
  out << "// " << prefix << ": C = A * B with B in nm(" << N << "," << M << "," << L << ") (N:M SpMM intrinsic)"
      << (aKMajor ? ", A k-major" : "") << (tensorCores ? ", on tensor cores (3xTF32)" : "") << "\n"
      << kKernelTemplate;
  const char* parameters =
      "(const float* __restrict__ A, const float* __restrict__ B, const int* __restrict__ D, float* __restrict__ C, "
      "int m, int n, int k, int w, int q, int tilesPerSplit, int atomic)";
  // Tile `tile`'s kernels for A k-major (kMajor) or row-major in global
  // memory, named prefix_<tile><infix><variant>. Those that run on A's
  // transpose (onTranspose) first wait for the transpose, which a launch
  // may let them overlap (NmSpmmLaunchPath::Chained; without a dependent
  // launch the wait returns at once).
  auto emitTile = [&](const NmSpmmTile& tile, bool kMajor, const char* infix, bool onTranspose) {
    int windows = nmSpmmTileWindows(tile, N, M);
    int chunk = tile.rolled ? nmSpmmWindowsPerTile(N, M) : windows;
    for (int variant = 0; variant < 5; ++variant) {
      // 0: the tile's kernel; 1: its packing kernel; 2: its stream-K
      // kernel; 3: its stream-K kernel that takes whole tiles first; 4: its
      // split-K kernel that sums the splits in a thread block cluster.
      const bool packed = variant == 1, streamK = variant == 2 || variant == 3, whole = variant == 3,
                 cluster = variant == 4;
      if (packed && !nmSpmmTilePacks(tile, N, M)) continue;
      if (streamK && !tile.mbarriers) continue;
      if (cluster && !nmSpmmTileClusters(tile)) continue;
      // 8 x 8 per thread: at most 128 registers, two 256-thread CTAs per SM;
      // 16 x 8: up to 255 registers, one CTA.
      int registers = tile.threadRows == 8 ? 128 : 255;
      // Every template argument printed, in the template's order.
      auto flag = [](bool on) { return on ? "true" : "false"; };
      out << "extern \"C\" __global__ void __launch_bounds__(" << tile.threads() << ", "
          << std::max(1, 65536 / (tile.threads() * registers)) << ") " << prefix << "_" << tile.name << infix
          << (packed ? "_packed" : whole ? "_hy" : streamK ? "_sk" : cluster ? "_cl" : "") << parameters
          << " {\n" << (onTranspose ? "  tcc_nm_wait_for_previous_kernel();\n" : "") << "  tcc_nm_spmm_tile<"
          << tile.warpsM << ", " << tile.warpsN << ", " << tile.threadRows << ", " << N << ", " << M << ", " << L
          << ", " << windows << ", " << nmSpmmStages(tile, N, M, L, packed) << ", " << flag(packed) << ", "
          << flag(tile.rowMajorA) << ", " << chunk << ", " << flag(tile.mbarriers) << ", " << flag(streamK) << ", "
          << flag(tile.spread) << ", " << flag(tile.dColumns) << ", " << flag(whole) << ", " << flag(tile.dNext) << ", "
          << flag(kMajor) << ", " << flag(tile.pipelined) << ", " << flag(tile.shiftA) << ", " << flag(cluster)
          << ">(A, B, D, C, m, n, k, w, q, tilesPerSplit, atomic);\n}\n";
    }
  };
  if (tensorCores) out << nmSpmmTensorCoreKernels(N, M, L, prefix, parameters);
  for (const auto& tile : nmSpmmTiles())
    if (!tensorCores && !tile.tensorCores && nmSpmmTileFits(tile, N, M, L) && nmSpmmTileTakesA(tile, aKMajor))
      emitTile(tile, aKMajor, "", false);
  // A row-major A: the kernels of the tiles that run on its k-major
  // transpose, and the transpose.
  if (!aKMajor && !tensorCores) {
    bool transposes = false;
    for (const auto& tile : nmSpmmTiles())
      if (nmSpmmTileTransposesA(tile, N, M, L)) emitTile(tile, true, "_at", true), transposes = true;
    if (transposes) out << transposeKernel(prefix);
  }
  // Any N, M, L: one thread per entry of C (shapes no tile fits).
  out << "extern \"C\" __global__ void " << prefix << "_simple" << parameters << " {\n"
      << "  const int np = q * " << L << ";\n"
      << "  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < (long long)m * n;\n"
      << "       e += (long long)gridDim.x * blockDim.x) {\n"
      << "    const int i = (int)(e / n), j = (int)(e % n);\n"
      << "    float sum = 0.f;\n"
      << "    for (int u = 0; u < w; ++u) {\n"
      << "      const int row = (u / " << N << ") * " << M << " + D[(long long)u * q + j / " << L << "];\n"
      << "      if (row < k) sum = fmaf(A[" << (aKMajor ? "(long long)row * m + i" : "(long long)i * k + row")
      << "], B[(long long)u * np + j], sum);\n"
      << "    }\n"
      << "    C[e] = sum;\n"
      << "  }\n}\n";
  out << "extern \"C\" __global__ void " << prefix << "_zero(float* C, long long count) {\n"
      << "  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < count;\n"
      << "       e += (long long)gridDim.x * blockDim.x) C[e] = 0.f;\n}\n";
  // The same by 16-byte stores (the floats before C's first 16-byte
  // boundary and after the last one one by one); it lets a tile kernel
  // launched to overlap it start at once (that kernel waits for it before
  // it writes C). Launched itself to overlap A's transpose, it ends only
  // after the transpose has (its last wait), so that the tile kernel's wait
  // for it covers the transpose too.
  out << "extern \"C\" __global__ void " << prefix << "_zero4(float* C, long long count) {\n"
      << "  asm volatile(\"griddepcontrol.launch_dependents;\\n\" ::: \"memory\");\n"
      << "  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x, stride = (long long)gridDim.x * "
         "blockDim.x;\n"
      << "  long long head = (long long)((16u - ((unsigned)(unsigned long long)C & 15u)) & 15u) / 4;\n"
      << "  if (head > count) head = count;\n"
      << "  const long long vectors = (count - head) / 4, tail = head + 4 * vectors;\n"
      << "  if (t < head) C[t] = 0.f;\n"
      << "  if (t < count - tail) C[tail + t] = 0.f;\n"
      << "  float4* body = reinterpret_cast<float4*>(C + head);\n"
      << "  for (long long e = t; e < vectors; e += stride) body[e] = make_float4(0.f, 0.f, 0.f, 0.f);\n"
      << "  asm volatile(\"griddepcontrol.wait;\\n\" ::: \"memory\");\n}\n";
  return out.str();
}

}  // namespace tcc::lowering
