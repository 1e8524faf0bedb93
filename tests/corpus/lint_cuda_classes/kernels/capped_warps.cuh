// A warp width capped at 32 for small blocks, and a two-value block
// reduction whose scratch keeps one row per 32-lane warp.
#pragma once
#include <algorithm>

template <int kThreads>
__device__ void butterfly(float* x) {
  constexpr int kWarpWidth = std::min(kThreads, 32);  // expect: PG508
  constexpr int kChunk = std::min(kThreads, 32);  // a tile, not a warp
  x[threadIdx.x % kWarpWidth] += x[kChunk - 1];
}

__device__ void pair_sum(float* v) {
  static __shared__ float rows[32][2];  // expect: PG507
  int lane = threadIdx.x % warpSize;
  int wid = threadIdx.x / warpSize;
  if (lane == 0) {
    rows[wid][0] = v[0];
    rows[wid][1] = v[1];
  }
  __syncthreads();
  bool live = threadIdx.x < blockDim.x / 32.f;  // expect: PG504
  v[0] = live ? rows[lane][0] : 0.f;
  v[1] = live ? rows[lane][1] : 0.f;
}
