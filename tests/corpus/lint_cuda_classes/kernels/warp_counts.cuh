// Counting warps with a float divisor, warp counts kept in macros, and
// per-warp scratch read back by lane.
#pragma once

#define THREADS_X 8
#define THREADS_Y 32
#define CTA_THREADS (THREADS_X * THREADS_Y)
#define WARPS_PER_CTA (CTA_THREADS / 32)  // expect: PG504
#define ROWS_PER_STEP (CTA_THREADS / 32)

template <typename T>
__device__ T max_across_block(T v) {
  static __shared__ T best[32];  // expect: PG507
  int lane = threadIdx.x & 31;  // expect: PG504
  int warp = threadIdx.x >> 5;  // expect: PG504
  if (lane == 0) best[warp] = v;
  __syncthreads();
  bool live = lane < blockDim.x / 32.0f;  // expect: PG504
  v = live ? best[lane] : T(-1e30f);
  return v;
}

template <typename T>
__device__ T sum_across_block(T v) {
  // sized for 32 warps, read back under a warpSize count: only over-allocated
  __shared__ T part[32];
  int lane = threadIdx.x % warpSize;
  int warp = threadIdx.x / warpSize;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / warpSize ? part[lane] : T(0);
  return v;
}

__device__ float mean_of(float total) {
  return total / 32.f;  // a float 32 that counts nothing
}
