// A tensor-core GEMM laid out by hand: the kernel never calls a shuffle, but
// the translation unit issues warp-collective PTX, so splitting the thread
// index by 32 is lane/warp arithmetic.
#include <cuda_fp16.h>

__device__ inline void frag_mma(const unsigned* a, const unsigned* b, float* c) {
  asm volatile(  // expect: PG601
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int THREADS, int TILES_N>
__global__ void frag_gemm(const unsigned* A, const unsigned* B, float* C) {
  constexpr int row_step = 2 * ((THREADS / 32) / TILES_N);  // expect: PG504
  int row = 8 * (threadIdx.x / 32) + (threadIdx.x % 32) / 4;  // expect: PG504 PG504
  int quad = threadIdx.x % 4;  // four lanes share a fragment row: not the warp width
  constexpr int busy_threads = 32 * TILES_N;
  int stride = busy_threads / 32;  // expect: PG504
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  frag_mma(A + row * row_step, B + quad, acc);
  C[row * stride + quad] = acc[0];
}

// Warp counts held in names that say so, whatever is divided by 32.
constexpr int RASTER_CTA = 320;
constexpr int RASTER_WARPS = RASTER_CTA / 32;  // expect: PG504
constexpr int ROWS_OF_TILE = RASTER_CTA / 32;  // a row count: not named for warps

// A 32-bit scale table, one entry per 32 quantised values: sized by /32 but
// indexed by a data index, so no per-warp slots.
__global__ void group_scales(const float* x, float* scales) {
  __shared__ float group_max[1024 / 32];
  int t = threadIdx.x;
  if (t % 16 == 0) group_max[t / 16] = x[t];
  __syncthreads();
  if (t < 1024 / 32) scales[t] = group_max[t];
}
