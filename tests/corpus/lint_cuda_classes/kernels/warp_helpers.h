// Device helpers in a plain .h header next to the .cu files that include it.
#pragma once
#include <cuda_runtime.h>

#define WARP_THREADS 32  // expect: PG508

__device__ __forceinline__ float row_sum(float v) {
  for (int step = 16; step > 0; step >>= 1)  // expect: PG505
    v += __shfl_xor_sync(0xffffffffu, v, step);  // expect: PG501
  return v;
}

__device__ __forceinline__ unsigned lane_bits() {
  unsigned r;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));  // expect: PG601
  return r;
}
