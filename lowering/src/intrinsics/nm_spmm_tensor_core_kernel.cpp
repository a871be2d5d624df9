// The N:M SpMM intrinsic's tensor-core kernels (tcc/lowering/nm_spmm.h,
// NmSpmmTile::tensorCores): what a statement scheduled with tensorcore()
// runs, one template instantiated per tile that fits.
#include <sstream>

#include "nm_spmm.h"

namespace tcc::lowering {

namespace {

// A (m x k) and C (m x n) row-major; B' (w x q*L) row-major and D (w x q)
// as tcc/runtime/nm.h stores them. Per k-tile of KW windows a CTA stages,
// all by cp.async (zero-filled past the operands' edges), in STAGES slots:
//   As[BM][KS + 4]  A's tile row-major, all KS = KW*M columns (the kept
//                   rows index it; pitch 4 mod 32);
//   Bs[WS][BN + 8]  B''s WS = KW*N kept rows (pitch 8 mod 32: a warp's
//                   loads of a fragment hit 32 banks);
//   Ds[WS][GT]      D's entries for the kept rows and the tile's groups.
// A warp computes 64 x 32 of C: 4 x 4 steps of mma.sync m16n8k8 per 8 kept
// rows, each value split into two TF32 values and multiplied three times
// (3xTF32: the small parts' product, below float32's precision, left out).
// A fragment's row r of A for kept row u is A's column (u / N) * M + D[u][g]
// of the tile: the gather is the fragment's shared-memory load.
// The tensor cores add a step's products into the accumulator truncated,
// which over k = 4096 drifts to 1e-5 of the result; so each k-tile's
// products are summed from zero in registers of their own (3 WS / 8
// truncated additions) and added into the totals in float32, which makes
// the result closer to the exact sum than cuBLAS's float32 SGEMM is
// (bench/nm_spmm/RESULTS.md). An infinite entry of A or B' gives NaN where
// it reaches (its small part is inf - inf), not +-inf.
constexpr const char* kTensorCoreTemplate = R"tcc(
#ifndef TCC_NM_TC_TEMPLATE
#define TCC_NM_TC_TEMPLATE
__device__ __forceinline__ void tcc_nm_mma_tf32(float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// The same into a zero accumulator (a k-tile's first products).
__device__ __forceinline__ void tcc_nm_mma_tf32_first(float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %10, %10, %10};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.f));
}
// x = big + small exactly: big is x with its low 13 mantissa bits cleared
// (a TF32 value); small = x - big has at most 13 significant bits, of which
// the tensor cores read the top 11.
__device__ __forceinline__ void tcc_nm_split_tf32(float x, unsigned& big, unsigned& small) {
  big = __float_as_uint(x) & 0xffffe000u;
  small = __float_as_uint(x - __uint_as_float(big));
}

template <int WARPS_M, int WARPS_N, int NN, int MM, int LL, int KW, int STAGES>
__device__ __forceinline__ void tcc_nm_tc_tile(const float* __restrict__ A, const float* __restrict__ B,
                                               const int* __restrict__ D, float* __restrict__ C, int m, int n, int k,
                                               int w, int q, int tilesPerSplit, int atomic) {
  constexpr int THREADS = WARPS_M * WARPS_N * 32;
  constexpr int BM = WARPS_M * 64, BN = WARPS_N * 32;
  constexpr int KS = KW * MM, WS = KW * NN;
  constexpr int GT = BN >= LL ? BN / LL : 1;  // column groups of the tile
  constexpr int GW = LL >= 32 ? 1 : 32 / LL;  // of a warp's 32 columns
  constexpr int JG = 4 / GW;                  // 8-column steps per group
  constexpr int AP = KS + 4, BP = BN + 8;
  static_assert(WS % 8 == 0 && KS % 4 == 0 && LL % 8 == 0 && (LL % 32 == 0 || 32 % LL == 0),
                "kept rows in steps of 8, each step's 8 columns in one group");
  constexpr int A_STAGE = BM * AP, B_STAGE = WS * BP, D_STAGE = WS * GT;
  extern __shared__ float4 tcc_nm_shared[];
  float* As = reinterpret_cast<float*>(tcc_nm_shared);
  float* Bs = As + STAGES * A_STAGE;
  int* Ds = reinterpret_cast<int*>(Bs + STAGES * B_STAGE);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int warpM = warp / WARPS_N, warpN = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int np = q * LL, groupBase = bn / LL;
  const int tilesTotal = (w / NN + KW - 1) / KW;
  const int tileBegin = blockIdx.z * tilesPerSplit;
  const int tileEnd = min(tilesTotal, tileBegin + tilesPerSplit);
  // A's rows start on 16 bytes where k is a multiple of 4.
  const bool aVectors = (k & 3) == 0 && (reinterpret_cast<unsigned long long>(A) & 15) == 0;

  // D's rows start on 16 bytes where q is a multiple of 4 (the tile's
  // groups then start on a multiple of GT).
  const bool dVectors = GT % 4 == 0 && (q & 3) == 0 && (reinterpret_cast<unsigned long long>(D) & 15) == 0;

  auto issue = [&](int tile, int stage) {
    const int k0 = tile * KS, u0 = tile * WS;
    float* as = As + stage * A_STAGE;
    float* bs = Bs + stage * B_STAGE;
    int* ds = Ds + stage * D_STAGE;
    // A k-tile inside A, B' and D (most of them): whole copies whose
    // addresses differ by constants, a few instructions each (the guarded
    // ones below cost as much again as the multiply-adds' issue).
    if (aVectors && bm + BM <= m && k0 + KS <= k && u0 + WS <= w && bn + BN <= np) {
      const float* a = A + (long long)bm * k + k0;
#pragma unroll
      for (int i = tid; i < BM * KS / 4; i += THREADS) {
        const int r = i / (KS / 4), c = (i % (KS / 4)) * 4;
        tcc_nm_cp_async16_full(as + r * AP + c, a + (long long)r * k + c);
      }
      const float* b = B + (long long)u0 * np + bn;
#pragma unroll
      for (int i = tid; i < WS * BN / 4; i += THREADS) {
        const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
        tcc_nm_cp_async16_full(bs + r * BP + c, b + (long long)r * np + c);
      }
      const int* d = D + (long long)u0 * q + groupBase;
      if (dVectors) {
#pragma unroll
        for (int i = tid; i < WS * GT / 4; i += THREADS) {
          const int r = i / (GT / 4), c = (i % (GT / 4)) * 4;
          tcc_nm_cp_async16_full(ds + r * GT + c, d + (long long)r * q + c);
        }
      } else {
#pragma unroll
        for (int i = tid; i < WS * GT; i += THREADS) tcc_nm_cp_async4_full(ds + i, d + (long long)(i / GT) * q + i % GT);
      }
      return;
    }
    if (aVectors) {
#pragma unroll
      for (int i = tid; i < BM * KS / 4; i += THREADS) {
        const int r = i / (KS / 4), c = (i % (KS / 4)) * 4, row = bm + r, col = k0 + c;
        const int bytes = row < m && col < k ? min(16, 4 * (k - col)) : 0;
        tcc_nm_cp_async16(as + r * AP + c, bytes ? A + (long long)row * k + col : A, bytes);
      }
    } else {
#pragma unroll 1
      for (int i = tid; i < BM * KS; i += THREADS) {
        const int r = i / KS, c = i % KS, row = bm + r, col = k0 + c;
        const bool inside = row < m && col < k;
        tcc_nm_cp_async4(as + r * AP + c, inside ? A + (long long)row * k + col : A, inside ? 4 : 0);
      }
    }
#pragma unroll
    for (int i = tid; i < WS * BN / 4; i += THREADS) {
      const int r = i / (BN / 4), c = (i % (BN / 4)) * 4, u = u0 + r, col = bn + c;
      const bool inside = u < w && col < np;
      tcc_nm_cp_async16(bs + r * BP + c, inside ? B + (long long)u * np + col : B, inside ? 16 : 0);
    }
#pragma unroll
    for (int i = tid; i < WS * GT; i += THREADS) {
      const int u = u0 + i / GT, group = groupBase + i % GT;
      const bool inside = u < w && group < q;
      tcc_nm_cp_async4(ds + i, inside ? D + (long long)u * q + group : D, inside ? 4 : 0);
    }
  };

  float acc[4][4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (tileBegin + s < tileEnd) issue(tileBegin + s, s);
    tcc_nm_cp_async_commit();
  }
  for (int tile = tileBegin, step = 0; tile < tileEnd; ++tile, ++step) {
    tcc_nm_cp_async_wait<STAGES - 2>();
    __syncthreads();  // k-tile `tile` has landed; the slot computed last step is free
    if (tile + STAGES - 1 < tileEnd) issue(tile + STAGES - 1, (step + STAGES - 1) % STAGES);
    tcc_nm_cp_async_commit();
    const int stage = step % STAGES;
    const float* as = As + stage * A_STAGE;
    const float* bs = Bs + stage * B_STAGE;
    const int* ds = Ds + stage * D_STAGE;
    float part[4][4][4];
#pragma unroll
    for (int kk = 0; kk < WS; kk += 8) {
      const int u0 = kk + t, u1 = kk + t + 4;  // the thread's kept rows of the step
#pragma unroll
      for (int gw = 0; gw < GW; ++gw) {
        const int first = warpN * 32 + gw * (32 / GW);  // the group's first column in the tile
        const int group = BN >= LL ? first / LL : 0;
        const int c0 = (u0 / NN) * MM + ds[u0 * GT + group], c1 = (u1 / NN) * MM + ds[u1 * GT + group];
        unsigned bBig[JG][2], bSmall[JG][2];
#pragma unroll
        for (int j = 0; j < JG; ++j) {
          const int col = first + j * 8 + g;
          tcc_nm_split_tf32(bs[u0 * BP + col], bBig[j][0], bSmall[j][0]);
          tcc_nm_split_tf32(bs[u1 * BP + col], bBig[j][1], bSmall[j][1]);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float* rowA = as + (warpM * 64 + i * 16 + g) * AP;
          unsigned aBig[4], aSmall[4];
          tcc_nm_split_tf32(rowA[c0], aBig[0], aSmall[0]);
          tcc_nm_split_tf32(rowA[8 * AP + c0], aBig[1], aSmall[1]);
          tcc_nm_split_tf32(rowA[c1], aBig[2], aSmall[2]);
          tcc_nm_split_tf32(rowA[8 * AP + c1], aBig[3], aSmall[3]);
#pragma unroll
          for (int j = 0; j < JG; ++j) {
            float* sums = part[i][gw * JG + j];
            if (kk == 0)
              tcc_nm_mma_tf32_first(sums, aSmall, bBig[j]);
            else
              tcc_nm_mma_tf32(sums, aSmall, bBig[j]);
            tcc_nm_mma_tf32(sums, aBig, bSmall[j]);
            tcc_nm_mma_tf32(sums, aBig, bBig[j]);
          }
        }
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
  }
  tcc_nm_cp_async_wait<0>();

  // Launched to overlap the kernel that zeroes C (split-K): C is written
  // only once that kernel has finished (at once otherwise).
  tcc_nm_wait_for_previous_kernel();
  const bool pairs = (n & 1) == 0 && (reinterpret_cast<unsigned long long>(C) & 7) == 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = bm + warpM * 64 + i * 16 + g + 8 * half, col = bn + warpN * 32 + j * 8 + 2 * t;
        if (row >= m || col >= n) continue;
        const float x = acc[i][j][2 * half], y = acc[i][j][2 * half + 1];
        float* out = C + (long long)row * n + col;
        if (atomic) {
          atomicAdd(out, x);
          if (col + 1 < n) atomicAdd(out + 1, y);
        } else if (pairs && col + 1 < n) {
          *reinterpret_cast<float2*>(out) = make_float2(x, y);
        } else {
          out[0] = x;
          if (col + 1 < n) out[1] = y;
        }
      }
}
#endif
)tcc";

}  // namespace

std::string nmSpmmTensorCoreKernels(int N, int M, int L, const std::string& prefix, const char* parameters) {
  std::ostringstream out;
  out << kTensorCoreTemplate;
  for (const auto& tile : nmSpmmTiles()) {
    if (!tile.tensorCores || !nmSpmmTileFits(tile, N, M, L)) continue;
    out << "extern \"C\" __global__ void __launch_bounds__(" << tile.threads() << ", 1) " << prefix << "_"
        << tile.name << parameters << " {\n  tcc_nm_tc_tile<" << tile.warpsM << ", " << tile.warpsN << ", " << N
        << ", " << M << ", " << L << ", " << nmSpmmTileWindows(tile, N, M) << ", " << nmSpmmStages(tile, N, M, L)
        << ">(A, B, D, C, m, n, k, w, q, tilesPerSplit, atomic);\n}\n";
  }
  return out.str();
}

}  // namespace tcc::lowering
