// A hand-unrolled butterfly whose steps are function-like macros taking the
// shuffle offset as a parameter: the step called with 16 is the 32-lane
// layout; a macro that takes the offset but never shuffles is not.
#pragma once

#define MIN_STEP(m, off, w)                                       \
  lo = fminf(lo, __shfl_xor_sync(m, lo, off, w));      \
  hi = fmaxf(hi, __shfl_xor_sync(m, hi, off, w))

#define SCALE_STEP(k, w) acc *= (k) + (w)

__device__ void min_max(unsigned long long lanes, float& lo, float& hi) {
  MIN_STEP(lanes, 16, 32);  // expect: PG505
  MIN_STEP(lanes, 8, 32);
  MIN_STEP(lanes, 4, 32);
  MIN_STEP(lanes, 2, 32);
  MIN_STEP(lanes, 1, 32);
}

__device__ float scaled(float acc) {
  SCALE_STEP(16, 32);
  return acc;
}
#undef MIN_STEP
#undef SCALE_STEP
