// Ported code guarded by the project's own switches: every CUDA branch below
// has a HIP branch, so only the unguarded lines at the end are findings.
#include <cuda_runtime.h>

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#define MYLIB_HIP 1
#else
#define MYLIB_HIP 0
#endif

#if MYLIB_HIP
#define MYLIB_FULL_MASK 0xffffffffffffffffull
#else
#define MYLIB_FULL_MASK 0xffffffffu
#endif

#ifdef TORCHOPS_WITH_HIP
#define WARP_SIZE 64
#else
#define WARP_SIZE 32
#endif

#ifndef DETECTRON_USE_ROCM
#include <cub/cub.cuh>
#define LANE_MASK 0xffffffff
#else
#include <hipcub/hipcub.hpp>
#define LANE_MASK 0xffffffffffffffffull
#endif

#if defined(GGML_USE_HIP) && defined(__GFX9__)
#define PHYS_WARP 64
#else
#define PHYS_WARP 32
#endif

#if __AMDGCN_WAVEFRONT_SIZE == 64
#define TILE_LANES 64
#else
#define TILE_LANES 32
#endif

#if !defined(GGML_USE_HIP) && __CUDA_ARCH__ >= 800
#define HAVE_CP_ASYNC
#endif

__device__ void copy_async(float* dst, const float* src) {
#ifdef HAVE_CP_ASYNC
  asm volatile("cp.async.commit_group;\n" ::);
#endif
  *dst = *src;
}

__device__ float reduce_row(float v) {
  for (int o = 16; o > 0; o >>= 1) {  // expect: PG505
#if MYLIB_HIP
    v += __shfl_xor(v, o);
#else
    v += __shfl_xor_sync(0xffffffff, v, o);
#endif
  }
  return v;
}

__device__ float broadcast(float v) {
  return __shfl_sync(0xffffffff, v, 0);  // expect: PG501
}
