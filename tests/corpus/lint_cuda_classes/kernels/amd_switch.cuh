// A portability header: the ROCm include and the AMDGCN builtin sit behind
// the project's HIP switch, so the rest of the file is CUDA that will be ported, and its
// 32-lane reduction is reported.
#pragma once
#ifdef USE_ROCM
#include <hip/hip_runtime.h>
#endif

__device__ inline int lanes_in_wave() {
#ifdef USE_ROCM
  return __builtin_amdgcn_wavefrontsize();
#else
  return 32;
#endif
}

__device__ inline float wave_sum(float v) {
  for (int hop = 16; hop > 0; hop >>= 1) {  // expect: PG505
    v += __shfl_xor_sync(~0ull, v, hop);
  }
  return v;
}
