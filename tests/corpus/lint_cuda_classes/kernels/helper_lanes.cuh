// Lane indices computed by a caller whose shuffles live in helpers of the
// same file (one through another): the caller is warp code too. Trap: the
// same `& 31` in a function that calls no warp helper is a tile column.
#pragma once

__device__ inline float butterfly(float v, int lane) {
  for (int hop = warpSize / 2; hop > 0; hop /= 2) v += __shfl_xor_sync(~0ull, v, hop);
  return lane == 0 ? v : 0.f;
}

template <int N>
__device__ inline float butterfly_n(float v, int lane) {
  return butterfly(v, lane) * N;
}

__device__ void rotate_rows(const float *in, float *out) {
  int t = threadIdx.x & 31;  // expect: PG504
  out[t] = butterfly_n<2>(in[t], t);
}

__device__ void copy_tile(const float *in, float *out) {
  int col = threadIdx.x & 31;
  out[col] = in[col];
}
