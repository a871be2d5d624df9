// A standalone probe of N:M SpMM on tensor cores with 3xTF32, written to
// choose the design of the intrinsic's tensor-core tiles
// (lowering/src/intrinsics/nm_spmm_tensor_core_kernel.cpp) before building
// them: CTA and warp tiles, windows per k-tile, stages, whether each
// k-tile's products are flushed into float32 totals (FLUSH), whether the
// split guards infinite values (ROUND = 2) or rounds (ROUND = 1), and how
// many of the three products are taken (TERMS). Random A and B', M = L = 32,
// m = n = k = argv[1]; against cuBLAS SGEMM (pedantic) on the dense pruned B
// and against exact (double) sums of sampled entries. Not built by CMake:
//   nvcc -O3 -arch=sm_90 -std=c++17 -o tf32x3_probe tf32x3_probe.cu -lcublas && ./tf32x3_probe 4096
// Results: tf32x3_probe_h200.txt, RESULTS.md.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__device__ __forceinline__ void cp16(void* s, const void* g) {
  unsigned a = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int P>
__device__ __forceinline__ void waitg() { asm volatile("cp.async.wait_group %0;\n" ::"n"(P)); }

__device__ __forceinline__ void mma(float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// The same with the accumulator's inputs zero (the first products of a chain).
__device__ __forceinline__ void mmaFirst(float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.f));
}
template <int ROUND>
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
  if (ROUND) {
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(x));
    float rest = x - __uint_as_float(big);
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(rest));
  } else if (ROUND == 2) {
    // An infinite x: big carries it, small is 0 (not inf - inf).
    const unsigned bits = __float_as_uint(x);
    big = bits & 0xffffe000u;
    small = (bits & 0x7f800000u) == 0x7f800000u ? 0u : __float_as_uint(x - __uint_as_float(big));
  } else {
    big = __float_as_uint(x) & 0xffffe000u;
    small = __float_as_uint(x - __uint_as_float(big));
  }
}

// CTA: BM x BN of C; warps WARPS_M x WARPS_N, each (BM/WARPS_M) x (BN/WARPS_N).
template <int NN, int MM, int LL, int KW, int STAGES, int BM, int BN, int WARPS_M, int WARPS_N, int ROUND, int TERMS, int FLUSH>
__global__ void __launch_bounds__(WARPS_M* WARPS_N * 32)
    nm_tf32x3(const float* __restrict__ A, const float* __restrict__ B, const int* __restrict__ D, float* __restrict__ C,
              int m, int n, int k, int q) {
  constexpr int THREADS = WARPS_M * WARPS_N * 32;
  constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N, MI = WM / 16, NJ = WN / 8;
  constexpr int KS = KW * MM, WS = KW * NN, GT = BN / LL;
  constexpr int AP = KS + 4, BP = BN + 8;
  static_assert(WS % 8 == 0 && (WN % LL == 0 || LL % WN == 0), "");
  constexpr int A_STAGE = BM * AP, B_STAGE = WS * BP, D_STAGE = WS * GT;
  extern __shared__ float4 smem4[];
  float* As = reinterpret_cast<float*>(smem4);
  float* Bs = As + STAGES * A_STAGE;
  int* Ds = reinterpret_cast<int*>(Bs + STAGES * B_STAGE);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int warpM = warp / WARPS_N, warpN = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int tiles = k / KS;

  auto issue = [&](int tile, int stage) {
    const int k0 = tile * KS, u0 = tile * WS;
    float* as = As + stage * A_STAGE;
    constexpr int AV = BM * KS / 4;
#pragma unroll
    for (int i = tid; i < AV; i += THREADS) {
      int r = i / (KS / 4), c = (i % (KS / 4)) * 4;
      cp16(as + r * AP + c, A + (long long)(bm + r) * k + k0 + c);
    }
    float* bs = Bs + stage * B_STAGE;
    constexpr int BV = WS * BN / 4;
#pragma unroll
    for (int i = tid; i < BV; i += THREADS) {
      int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
      cp16(bs + r * BP + c, B + (long long)(u0 + r) * n + bn + c);
    }
    int* ds = Ds + stage * D_STAGE;
    if constexpr (GT % 4 == 0) {
      constexpr int DV = WS * GT / 4;
      for (int i = tid; i < DV; i += THREADS) {
        int r = i / (GT / 4), c = (i % (GT / 4)) * 4;
        cp16(ds + r * GT + c, D + (long long)(u0 + r) * q + bn / LL + c);
      }
    } else {
      for (int i = tid; i < WS * GT; i += THREADS) ds[i] = D[(long long)(u0 + i / GT) * q + bn / LL + i % GT];
    }
  };

  float acc[MI][NJ][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) issue(s, s);
    commit();
  }
  for (int tile = 0; tile < tiles; ++tile) {
    waitg<STAGES - 2>();
    __syncthreads();
    if (tile + STAGES - 1 < tiles) issue(tile + STAGES - 1, (tile + STAGES - 1) % STAGES);
    commit();
    const int stage = tile % STAGES;
    const float* as = As + stage * A_STAGE;
    const float* bs = Bs + stage * B_STAGE;
    const int* ds = Ds + stage * D_STAGE;
    // FLUSH: this k-tile's products summed in fresh registers, then added
    // into the totals with FP32 adds (the tensor cores' accumulation
    // truncates; a chain over all of k drifts).
    float part[FLUSH ? MI : 1][FLUSH ? NJ : 1][4];
#pragma unroll
    for (int kk = 0; kk < WS; kk += 8) {
      constexpr int GW = WN >= LL ? WN / LL : 1;  // column groups per warp
#pragma unroll
      for (int gw = 0; gw < GW; ++gw) {
        const int group = (warpN * WN + gw * LL) / LL;
        const int c0 = ((kk + t) / NN) * MM + ds[(kk + t) * GT + group];
        const int c1 = ((kk + t + 4) / NN) * MM + ds[(kk + t + 4) * GT + group];
        constexpr int NJG = WN >= LL ? LL / 8 : NJ;
        unsigned bBig[NJG][2], bSmall[NJG][2];
#pragma unroll
        for (int j = 0; j < NJG; ++j) {
          const int col = warpN * WN + gw * LL + j * 8 + g;
          split<ROUND>(bs[(kk + t) * BP + col], bBig[j][0], bSmall[j][0]);
          split<ROUND>(bs[(kk + t + 4) * BP + col], bBig[j][1], bSmall[j][1]);
        }
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          const int r = warpM * WM + i * 16 + g;
          unsigned aBig[4], aSmall[4];
          split<ROUND>(as[r * AP + c0], aBig[0], aSmall[0]);
          split<ROUND>(as[(r + 8) * AP + c0], aBig[1], aSmall[1]);
          split<ROUND>(as[r * AP + c1], aBig[2], aSmall[2]);
          split<ROUND>(as[(r + 8) * AP + c1], aBig[3], aSmall[3]);
#pragma unroll
          for (int j = 0; j < NJG; ++j) {
            float* c = FLUSH ? part[FLUSH ? i : 0][FLUSH ? gw * NJG + j : 0] : acc[i][gw * NJG + j];
            if (FLUSH && kk == 0) mmaFirst(c, aSmall, bBig[j]);
            else if (TERMS >= 3) mma(c, aSmall, bBig[j]);
            if (TERMS >= 2) mma(c, aBig, bSmall[j]);
            mma(c, aBig, bBig[j]);
          }
        }
      }
    }
    if constexpr (FLUSH) {
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
    }
  }
  waitg<0>();
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      const int r = bm + warpM * WM + i * 16 + g, col = bn + warpN * WN + j * 8 + 2 * t;
      *reinterpret_cast<float2*>(C + (long long)r * n + col) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(C + (long long)(r + 8) * n + col) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
}

struct Problem {
  int m, n, k, N, M = 32, L = 32;
};

template <int NN, int KW, int STAGES, int BM, int BN, int WARPS_M, int WARPS_N, int ROUND, int TERMS, int FLUSH>
float runOne(const Problem& p, const float* A, const float* B, const int* D, float* C, int reps, std::vector<float>& out) {
  constexpr int MM = 32, LL = 32, KS = KW * MM, WS = KW * NN, GT = BN / LL;
  int shared = STAGES * (BM * (KS + 4) + WS * (BN + 8) + WS * GT) * 4;
  auto kernel = nm_tf32x3<NN, MM, LL, KW, STAGES, BM, BN, WARPS_M, WARPS_N, ROUND, TERMS, FLUSH>;
  if (shared > 232448) {
    printf("    [smem %d B: does not fit]\n", shared);
    return -1.f;
  }
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  dim3 grid(p.n / BN, p.m / BM);
  int q = p.n / LL;
  kernel<<<grid, WARPS_M * WARPS_N * 32, shared>>>(A, B, D, C, p.m, p.n, p.k, q);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> times;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(e0);
    kernel<<<grid, WARPS_M * WARPS_N * 32, shared>>>(A, B, D, C, p.m, p.n, p.k, q);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    times.push_back(ms);
  }
  CK(cudaGetLastError());
  out.resize((size_t)p.m * p.n);
  CK(cudaMemcpy(out.data(), C, out.size() * 4, cudaMemcpyDeviceToHost));
  std::sort(times.begin(), times.end());
  int regs = 0;
  cudaFuncAttributes attr;
  cudaFuncGetAttributes(&attr, kernel);
  regs = attr.numRegs;
  printf("    [regs %d, smem %d B, spills %zu]\n", regs, shared, (size_t)attr.localSizeBytes);
  return times[times.size() / 2];
}

int main(int argc, char** argv) {
  const int size = argc > 1 ? atoi(argv[1]) : 4096;
  Problem base{size, size, size, 0};
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);
  printf("%-8s %-26s %9s %9s %8s %8s %10s %10s %10s\n", "sparsity", "kernel", "ms", "cublas", "speedup", "TFLOP/s",
         "roofline%", "maxrel", "fp32maxrel");
  for (int N : {16, 12, 8, 4}) {
    Problem p = base;
    p.N = N;
    const int m = p.m, n = p.n, k = p.k, M = p.M, L = p.L;
    const int w = k / M * N, q = n / L;
    std::vector<float> A((size_t)m * k), Bp((size_t)w * n), Bd((size_t)k * n, 0.f);
    std::vector<int> D((size_t)w * q);
    for (auto& x : A) x = uni(rng);
    for (auto& x : Bp) x = uni(rng);
    std::vector<int> perm(M);
    for (int win = 0; win < k / M; ++win)
      for (int gq = 0; gq < q; ++gq) {
        for (int i = 0; i < M; ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng);
        std::sort(perm.begin(), perm.begin() + N);
        for (int u = 0; u < N; ++u) D[(size_t)(win * N + u) * q + gq] = perm[u];
      }
    for (int u = 0; u < w; ++u)
      for (int j = 0; j < n; ++j) Bd[(size_t)((u / N) * M + D[(size_t)u * q + j / L]) * n + j] = Bp[(size_t)u * n + j];
    float *dA, *dB, *dBd, *dC, *dRef;
    int* dD;
    CK(cudaMalloc(&dA, A.size() * 4));
    CK(cudaMalloc(&dB, Bp.size() * 4));
    CK(cudaMalloc(&dBd, Bd.size() * 4));
    CK(cudaMalloc(&dC, (size_t)m * n * 4));
    CK(cudaMalloc(&dRef, (size_t)m * n * 4));
    CK(cudaMalloc(&dD, D.size() * 4));
    CK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, Bp.data(), Bp.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dBd, Bd.data(), Bd.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dD, D.data(), D.size() * 4, cudaMemcpyHostToDevice));
    // cuBLAS: row-major C = A B is column-major C^T = B^T A^T.
    const float one = 1.f, zero = 0.f;
    auto gemm = [&] { cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, dBd, n, dA, k, &zero, dRef, n); };
    gemm();
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> ct;
    for (int r = 0; r < 15; ++r) {
      cudaEventRecord(e0);
      gemm();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      ct.push_back(ms);
    }
    std::sort(ct.begin(), ct.end());
    const float cublasMs = ct[ct.size() / 2];
    std::vector<float> ref((size_t)m * n);
    CK(cudaMemcpy(ref.data(), dRef, ref.size() * 4, cudaMemcpyDeviceToHost));
    // Double-precision values of sampled entries: the error scale of FP32 itself.
    std::vector<std::pair<int, int>> samples;
    for (int s = 0; s < 2000; ++s) samples.push_back({int(rng() % m), int(rng() % n)});
    std::vector<double> exact(samples.size());
    double exactMax = 0;
    for (size_t s = 0; s < samples.size(); ++s) {
      double sum = 0;
      auto [i, j] = samples[s];
      for (int u = 0; u < w; ++u)
        sum += (double)A[(size_t)i * k + (u / N) * M + D[(size_t)u * q + j / L]] * Bp[(size_t)u * n + j];
      exact[s] = sum;
      exactMax = std::max(exactMax, std::fabs(sum));
    }
    double refMax = 0;
    for (float x : ref) refMax = std::max(refMax, (double)std::fabs(x));
    const double flops = 2.0 * m * n * (double)k * N / M;
    auto report = [&](const char* name, float ms, const std::vector<float>& out) {
      double maxDiff = 0, sampleDiff = 0, fp32Diff = 0;
      for (size_t i = 0; i < out.size(); ++i) maxDiff = std::max(maxDiff, (double)std::fabs(out[i] - ref[i]));
      for (size_t s = 0; s < samples.size(); ++s) {
        auto [i, j] = samples[s];
        sampleDiff = std::max(sampleDiff, std::fabs(out[(size_t)i * n + j] - exact[s]));
        fp32Diff = std::max(fp32Diff, std::fabs(ref[(size_t)i * n + j] - exact[s]));
      }
      printf("%-8.1f %-26s %9.4f %9.4f %8.3f %8.1f %10.1f %10.2e %10.2e  (vs exact %.2e)\n", 100.0 * (M - N) / M, name, ms,
             cublasMs, cublasMs / ms, flops / ms / 1e9, 100.0 * flops / ms / 1e9 / 64.1, maxDiff / refMax,
             fp32Diff / exactMax, sampleDiff / exactMax);
    };
    std::vector<float> out;
    float ms;
#define RUN(NAME, NN, KW, ST, BM, BN, WM_, WN_, RD, TM, FL)                           \
  if (N == NN) {                                                                 \
    ms = runOne<NN, KW, ST, BM, BN, WM_, WN_, RD, TM, FL>(p, dA, dB, dD, dC, 20, out); \
    if (ms > 0) report(NAME, ms, out);                                                       \
  }
    RUN("128x128 w64x32 kw4 s2 flush", 16, 4, 2, 128, 128, 2, 4, 0, 3, 1);
    RUN("128x128 w64x32 kw4 s2 flush guard", 16, 4, 2, 128, 128, 2, 4, 2, 3, 1);
    RUN("64x256 w64x32 kw4 s3 flush", 16, 4, 3, 64, 256, 1, 8, 0, 3, 1);
    RUN("64x256 w64x32 kw4 s2 flush", 16, 4, 2, 64, 256, 1, 8, 0, 3, 1);
    RUN("128x128 w64x32 kw4 s2 flush", 12, 4, 2, 128, 128, 2, 4, 0, 3, 1);
    RUN("64x256 w64x32 kw4 s2 flush", 12, 4, 2, 64, 256, 1, 8, 0, 3, 1);
    RUN("64x256 w64x32 kw4 s3 flush", 12, 4, 3, 64, 256, 1, 8, 0, 3, 1);
    RUN("64x256 w64x32 kw4 s3 flush guard", 12, 4, 3, 64, 256, 1, 8, 2, 3, 1);
    RUN("64x256 w64x32 kw4 s3 flush", 8, 4, 3, 64, 256, 1, 8, 0, 3, 1);
    RUN("64x256 w64x32 kw4 s3 flush guard", 8, 4, 3, 64, 256, 1, 8, 2, 3, 1);
    RUN("64x256 w64x32 kw8 s2 flush", 8, 8, 2, 64, 256, 1, 8, 0, 3, 1);
    RUN("64x256 w64x32 kw8 s2 flush", 4, 8, 2, 64, 256, 1, 8, 0, 3, 1);
    RUN("64x256 w64x32 kw8 s2 flush guard", 4, 8, 2, 64, 256, 1, 8, 2, 3, 1);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dBd);
    cudaFree(dC);
    cudaFree(dRef);
    cudaFree(dD);
  }
  return 0;
}
