// Code already written for HIP: nothing here is a finding (no expect markers).
#include <hip/hip_runtime.h>

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#define WARP_SIZE 64
#define FULL_MASK 0xffffffffffffffffull
#else
#define WARP_SIZE 32
#define FULL_MASK 0xffffffff
#endif

__device__ float warp_sum(float v) {
#ifdef USE_ROCM
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) v += __shfl_down(v, offset);
#else
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
#endif
  return v;
}

__device__ unsigned lane_id() {
#if !defined(__HIP_DEVICE_COMPILE__)
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
#else
  return __lane_id();
#endif
}

__global__ void count(const float* x, int* n) {
#ifndef __HIP_PLATFORM_AMD__
  unsigned votes = __ballot_sync(0xffffffff, x[threadIdx.x] > 0);
  if ((threadIdx.x & 31) == 0) atomicAdd(n, __popc(votes));
#elif defined(__HIP_PLATFORM_AMD__)
  unsigned long long votes = __ballot(x[threadIdx.x] > 0);
  if ((threadIdx.x % warpSize) == 0) atomicAdd(n, __popcll(votes));
#endif
}
