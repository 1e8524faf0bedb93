// Warp helpers of a library header: a mask constant named noun-first, a
// project shuffle wrapper unrolled from offset 16, and votes compared with
// 32-bit constants.
#pragma once
#include <cstdint>

static constexpr uint32_t MASK_ALL_LANES = 0xFFFFFFFF;  // expect: PG501
static constexpr uint32_t LOW_HALF = 0x0000FFFF;  // a half-word mask, not lanes

template <typename T>
__device__ inline T wrapped_shfl_down_sync(unsigned long long mask, T v, int delta) {
  return __shfl_down_sync(mask, v, delta);
}

__device__ inline float row_sum(float v) {
  v += wrapped_shfl_down_sync(~0ull, v, 16);  // expect: PG505
  v += wrapped_shfl_down_sync(~0ull, v, 8);
  v += wrapped_shfl_down_sync(~0ull, v, 4);
  return v;
}

__device__ inline bool all_lanes(bool p) {
  return __ballot_sync(~0ull, p) == 0xffffffffu;  // expect: PG503
}

__device__ inline bool any_lane(bool p) {
  return __ballot_sync(~0ull, p) != 0;
}

__device__ inline int split_point(bool p) {
  unsigned long long votes = __ballot_sync(~0ull, p);
  int n = __popcll(votes);
  if (n == 32) return -1;  // expect: PG504
  return n;
}
