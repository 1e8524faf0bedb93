// Vote and shuffle helpers whose lane mask is a parameter's default value:
// the full mask reaches the *_sync call only through the default, so it is
// reported where it is written (the macro, the constant or the default).
#pragma once

#ifndef LANES_ON
#define LANES_ON 0xffffffffu  // expect: PG501
#endif

const unsigned kEveryLane = 0xFFFFFFFF;  // expect: PG501
#define LOW_WORD_BITS 0xffffffffu  // a bit pattern, never a lane mask

#define XOR_STEP(M, v, o) v += __shfl_xor_sync(M, v, o)

__device__ inline unsigned long long vote_on(bool p, unsigned long long who = LANES_ON) {
  return __ballot_sync(who, p);
}

__device__ inline float pass_down(float v, int d, unsigned who = kEveryLane) {
  return __shfl_down_sync(who, v, d);
}

__device__ inline int any_on(int p, unsigned sel = 0xffffffff) {  // expect: PG501
  return __any_sync(sel, p);
}

template <unsigned Sel = 0xffffffffu>  // expect: PG501
__device__ inline int all_on(int p) {
  return __all_sync(Sel, p);
}

__device__ inline float fold(float v, unsigned m = 0xffffffff) {  // expect: PG501
  for (int o = 1; o < warpSize; o *= 2) XOR_STEP(m, v, o);
  return v;
}

// defaults that are already 64 bits wide, or never reach a warp function
__device__ inline int none_on(int p, unsigned long long sel = ~0ull) {
  return !__any_sync(sel, p);
}

__device__ inline unsigned low_word(unsigned long long x, unsigned keep = LOW_WORD_BITS) {
  return (unsigned)(x & keep);
}

#define PORTED_LANES 0xffffffffu
#if defined(USE_ROCM)
__device__ inline int ported_any(int p, unsigned long long sel = PORTED_LANES) {
  return __any_sync(sel, p);
}
#endif
