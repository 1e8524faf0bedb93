// Block reductions assembled from function-like macros: the lane mask, the
// shuffle width and the per-warp scratch reach the warp code only through
// macro bodies. Traps: a 32 that is a tile size, a mask handed to a macro
// whose CUDA definition sits behind a HIP switch.
#pragma once

const unsigned int kPairReduceBits = 0xffffffff;  // expect: PG501
#define EVERY_LANE 0xffffffffu  // expect: PG501

#define PAIR_STEP(M, P, D, W, F)                          \
  for (int k = 0; k < 2; ++k) {                           \
    (P)[k] = F((P)[k], __shfl_down_sync(M, (P)[k], D, W)); \
  }

#define PAIR_HALVING(M, P, W, F)                          \
  for (int d = (W) / 2; d > 0; d /= 2) {                  \
    PAIR_STEP(M, P, d, W, F)                              \
  }

#define PAIR_BLOCK(P, F, ZERO)                                   \
  __shared__ float stage[2][32];  /* expect: PG507 */            \
  int lane = threadIdx.x & 31;  /* expect: PG504 */              \
  int wid = threadIdx.x >> 5;  /* expect: PG504 */               \
  PAIR_HALVING(EVERY_LANE, P, 32, F);                            \
  if (lane == 0) {                                               \
    stage[0][wid] = (P)[0];                                      \
    stage[1][wid] = (P)[1];                                      \
  }                                                              \
  __syncthreads();                                               \
  for (int k = 0; k < 2; ++k) {                                  \
    (P)[k] = threadIdx.x < (blockDim.x >> 5)  /* expect: PG504 */ \
                 ? stage[k][lane]                                \
                 : (ZERO);                                       \
  }

template <typename Op, int span = 32>  // expect: PG508
__device__ void pair_warp(float* pair, Op op) {
  PAIR_HALVING(kPairReduceBits, pair, span, op);
}

template <typename Op>
__device__ void pair_block(float* pair, Op op) {
  PAIR_BLOCK(pair, op, 0.f);
}

template <typename Op>
__device__ void pair_warp_literal(float* pair, Op op) {
  PAIR_HALVING(0xffffffff, pair, 16, op);  // expect: PG501
}

// a tile of 32 columns, not a warp: not a width, never a shuffle
template <int kCols = 32>
__device__ float row_sum(const float* row) {
  float s = 0.f;
  for (int c = 0; c < kCols; ++c) s += row[c];
  return s;
}

#if defined(USE_ROCM)
#define NEIGHBOUR_SUM(M, v, o) ((v) + __shfl_xor((v), (o)))
#else
#define NEIGHBOUR_SUM(M, v, o) ((v) + __shfl_xor_sync((M), (v), (o)))
#endif

__device__ float neighbours(float v) { return NEIGHBOUR_SUM(0xffffffff, v, 1); }
