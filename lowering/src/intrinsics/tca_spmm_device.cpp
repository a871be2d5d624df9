// TCA-SpMM's device code (NVRTC-ready: no headers), specialised by name on
// the statement's prefix. See tca_spmm.h for the algorithm.
#include "tca_spmm.h"

namespace tcc::lowering {
namespace {

// PREFIX_ is replaced by the call's prefix. One kernel per (C, aligned):
// C chunks of 8 nonzeros per MMA (8 / C column groups of 8 columns, a tile
// of 64 / C columns), aligned when N % 8 == 0 (128-bit loads of the dense
// rows and 64-bit stores of the output).
constexpr const char* kDeviceCode = R"tcc(
// ---- TCA-SpMM: O(i,j) = S(i,k) * D(k,j), S CSR float16, D and O row-major ----
//
// Warp w computes row r = row_id_for_each_warp[w] with num_warps_per_row[w]
// warps (w is number warpid_within_row[w] of them). The row's warps share
// out its column tiles (wn warps) and then its nonzeros (wk = warps / wn
// segments; partial sums are added into O atomically when wk > 1, O
// arrives zeroed).
//
// Lane (g, t) = (lane / 4, lane % 4) holds chunk c = g / (8 / C) of each
// step's nonzeros: its two nonzeros p, p + 1 (k = 2t, 2t + 1 of the MMA)
// and the 8 dense columns j .. j + 7 of column group g % (8 / C). It loads
// the two compressed dense rows D(crd[p], j .. j + 7), D(crd[p+1], j .. j + 7)
// with 128-bit loads and pairs them into the left operand: MMA q's rows g
// and g + 8 are columns j + 2q and j + 2q + 1, its k = 2t, 2t + 1 are the
// two nonzeros. The sparse row is matricized into the right operand: column
// n holds chunk n / (8 / C), so B = (S[p], S[p+1]) in every lane. Output
// entry (m, n) is a partial dot product where chunk(m) == chunk(n): with
// C == 1 every entry, otherwise a diagonal of blocks, whose chunks are
// summed by log2(C) warp shuffles at the end of the row.

__device__ __forceinline__ void PREFIX_mma(float (&c)[4], unsigned a01, unsigned a23, unsigned b) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a01), "r"(a23), "r"(b));
}

// Eight float16 values D(row, j .. j + 7) into x (two per register, the
// lower column in the low half); zeros where there is no such value.
template <bool ALIGNED>
__device__ __forceinline__ void PREFIX_load_dense(const uint16_t* dense, int columns, int row, int j, unsigned (&x)[4]) {
  const bool valid = row >= 0;  // -1: a padding nonzero
  const uint16_t* address = dense + (int64_t)row * columns + j;
  if (ALIGNED) {
    if (valid && j < columns) {
      asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3])
                   : "l"(address));
    } else {
      x[0] = x[1] = x[2] = x[3] = 0u;
    }
  } else {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      unsigned low = valid && j + 2 * r < columns ? (unsigned)address[2 * r] : 0u;
      unsigned high = valid && j + 2 * r + 1 < columns ? (unsigned)address[2 * r + 1] : 0u;
      x[r] = low | (high << 16);
    }
  }
}

// Nonzeros of UNROLL steps as one lane holds them: the dense rows of its
// two (-1 past the segment's end) and their values as the MMA's B.
template <int UNROLL>
struct PREFIX_batch {
  int rowA[UNROLL], rowB[UNROLL];
  unsigned b[UNROLL];
};

template <int UNROLL, int STEP>
__device__ __forceinline__ void PREFIX_load_batch(PREFIX_batch<UNROLL>& batch, const int32_t* __restrict__ crd,
                                                  const uint16_t* __restrict__ vals, int64_t p, int64_t last) {
#pragma unroll
  for (int u = 0; u < UNROLL; ++u, p += STEP) {
    const bool validA = p < last, validB = p + 1 < last;
    batch.rowA[u] = validA ? crd[p] : -1;
    batch.rowB[u] = validB ? crd[p + 1] : -1;
    const unsigned sa = validA ? (unsigned)vals[p] : 0u;
    const unsigned sb = validB ? (unsigned)vals[p + 1] : 0u;
    batch.b[u] = sa | (sb << 16);
  }
}

__device__ __forceinline__ void PREFIX_store_pair(float* out, bool atomic, bool vector, bool first, bool second,
                                                  float v0, float v1) {
  if (atomic) {
    if (first) atomicAdd(out, v0);
    if (second) atomicAdd(out + 1, v1);
  } else if (vector && first && second) {
    asm volatile("st.global.v2.f32 [%0], {%1, %2};\n" ::"l"(out), "f"(v0), "f"(v1) : "memory");
  } else {
    if (first) out[0] = v0;
    if (second) out[1] = v1;
  }
}

template <int C, bool ALIGNED>
__device__ __forceinline__ void PREFIX_body(const int32_t* __restrict__ row_id_for_each_warp,
                                            const int32_t* __restrict__ num_warps_per_row,
                                            const int32_t* __restrict__ warpid_within_row, int64_t warps,
                                            const long long* __restrict__ pos, const int32_t* __restrict__ crd,
                                            const uint16_t* __restrict__ vals, const uint16_t* __restrict__ dense,
                                            float* __restrict__ out, int columns) {
  constexpr int GROUPS = 8 / C;     // column groups of 8 per tile
  constexpr int WIDTH = 8 * GROUPS;  // columns per tile
  constexpr int STEP = 8 * C;        // nonzeros per MMA
  // MMA steps whose loads are in flight together. Measured on the H100
  // (bench/tca_spmm's tuner): 2 steps at 64 registers, 4 blocks of 8 warps
  // per SM, beat 4 steps at 80 registers and 3 blocks by 1-19% and 8 steps
  // at 128 registers and 2 blocks by 8-67%; prefetching the next steps'
  // nonzeros lost 6-60% (bench/tca_spmm/RESULTS.md).
  constexpr int UNROLL = 2;
  constexpr bool PREFETCH = false;   // load the next steps' nonzeros before this step's MMAs
  const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (warp >= warps) return;
  const int row = row_id_for_each_warp[warp];
  const int rowWarps = num_warps_per_row[warp];
  const int id = warpid_within_row[warp];
  const int tiles = (columns + WIDTH - 1) / WIDTH;
  // rowWarps is 1, 2, 4, 8 or a multiple of 8, so wn divides it.
  int wn = 1;
  while (wn * 2 <= rowWarps && wn * 2 <= tiles && wn < 8) wn *= 2;
  const int wk = rowWarps / wn;
  const int segment = id / wn, firstTile = id % wn;
  const int64_t begin = pos[row], end = pos[row + 1];
  int64_t per = (end - begin + wk - 1) / wk;
  per = (per + STEP - 1) / STEP * STEP;
  const int64_t first = begin + segment * per;
  const int64_t last = end < first + per ? end : first + per;
  if (first >= last) return;
  const bool atomic = wk > 1;

  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int chunk = g / GROUPS, group = g % GROUPS;
  const int own = chunk * 8 + 2 * t;  // the lane's first nonzero within a step
  const bool diagonal = C == 8 ? t == (g >> 1) : (2 * t) / GROUPS == chunk;
  float* outRow = out + (int64_t)row * columns;

  for (int tile = firstTile; tile < tiles; tile += wn) {
    const int j = tile * WIDTH + group * 8;
    float acc[4][4];
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[q][0] = acc[q][1] = acc[q][2] = acc[q][3] = 0.0f;
    PREFIX_batch<UNROLL> next;
    if (PREFETCH) PREFIX_load_batch<UNROLL, STEP>(next, crd, vals, first + own, last);
    for (int64_t base = first; base < last; base += STEP * UNROLL) {
      PREFIX_batch<UNROLL> now;
      if (PREFETCH) now = next;
      else PREFIX_load_batch<UNROLL, STEP>(now, crd, vals, base + own, last);
      unsigned x[UNROLL][4], y[UNROLL][4];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        PREFIX_load_dense<ALIGNED>(dense, columns, now.rowA[u], j, x[u]);
        PREFIX_load_dense<ALIGNED>(dense, columns, now.rowB[u], j, y[u]);
      }
      // The next batch's nonzeros load while this one's MMAs wait for D.
      if (PREFETCH) PREFIX_load_batch<UNROLL, STEP>(next, crd, vals, base + STEP * UNROLL + own, last);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        if (base + u * STEP >= last) break;  // the same in every lane
#pragma unroll
        for (int q = 0; q < 4; ++q)
          PREFIX_mma(acc[q], __byte_perm(x[u][q], y[u][q], 0x5410), __byte_perm(x[u][q], y[u][q], 0x7632),
                     now.b[u]);
      }
    }
    // The diagonal: this lane's entry of its own chunk, then the chunks'
    // sum over the lanes holding the same columns.
    float low[4], high[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const bool odd = C == 8 && (g & 1);
      low[q] = odd ? acc[q][1] : acc[q][0];
      high[q] = odd ? acc[q][3] : acc[q][2];
      if (C >= 8) {
        low[q] += __shfl_xor_sync(0xffffffffu, low[q], 4);
        high[q] += __shfl_xor_sync(0xffffffffu, high[q], 4);
      }
      if (C >= 4) {
        low[q] += __shfl_xor_sync(0xffffffffu, low[q], 9);
        high[q] += __shfl_xor_sync(0xffffffffu, high[q], 9);
      }
      if (C >= 2) {
        low[q] += __shfl_xor_sync(0xffffffffu, low[q], 18);
        high[q] += __shfl_xor_sync(0xffffffffu, high[q], 18);
      }
    }
    if (!diagonal || j >= columns) continue;
    if (C == 8) {
      // Lane g holds column j + g (MMA g / 2, its row g % 2 half).
      float value = 0.0f;
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (q == (g >> 1)) value = (g & 1) ? high[q] : low[q];
      const int column = j + g;
      if (column < columns) {
        if (atomic) atomicAdd(outRow + column, value);
        else outRow[column] = value;
      }
    } else {
      // The four lanes of a column group write two columns each.
      float v0 = 0.0f, v1 = 0.0f;
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (q == t) {
          v0 = low[q];
          v1 = high[q];
        }
      const int column = j + 2 * t;
      PREFIX_store_pair(outRow + column, atomic, ALIGNED, column < columns, column + 1 < columns, v0, v1);
    }
  }
}
)tcc";

// One extern "C" kernel per instantiation, named PREFIX_c<C>_<v|s>.
constexpr const char* kKernelTemplate = R"tcc(
extern "C" __global__ void __launch_bounds__(256MIN_BLOCKS) PREFIX_cCHUNKS_MODE(
    const int32_t* __restrict__ row_id_for_each_warp, const int32_t* __restrict__ num_warps_per_row,
    const int32_t* __restrict__ warpid_within_row, int64_t warps, const long long* __restrict__ pos,
    const int32_t* __restrict__ crd, const uint16_t* __restrict__ vals, const uint16_t* __restrict__ dense,
    float* __restrict__ out, int columns) {
  PREFIX_body<CHUNKS, ALIGNED>(row_id_for_each_warp, num_warps_per_row, warpid_within_row, warps, pos, crd, vals,
                               dense, out, columns);
}
)tcc";

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

std::string tcaSpmmKernelName(const std::string& prefix, int chunksPerStep, bool aligned) {
  return prefix + "_c" + std::to_string(chunksPerStep) + (aligned ? "_v" : "_s");
}

std::string tcaSpmmDeviceCode(const std::string& prefix) {
  std::string code = kDeviceCode;
  for (int chunks : {1, 2, 4, 8})
    for (bool aligned : {true, false}) {
      std::string kernel = replaceAll(kKernelTemplate, "PREFIX_cCHUNKS_MODE", tcaSpmmKernelName("PREFIX", chunks, aligned));
      kernel = replaceAll(kernel, "CHUNKS", std::to_string(chunks));
      kernel = replaceAll(kernel, "ALIGNED>", aligned ? "true>" : "false>");
      // 4 blocks per SM (64 registers) where that costs no spills.
      kernel = replaceAll(kernel, "MIN_BLOCKS", aligned ? ", 4" : "");
      code += kernel;
    }
  return replaceAll(code, "PREFIX", prefix);
}

}  // namespace tcc::lowering
