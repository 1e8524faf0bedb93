// portagpu_hip_compat.h: lets one translated source build on HIP 5.x (no *_sync
// warp builtins, 64-bit __ballot) and on HIP >= 6.3 (*_sync builtins that
// static_assert a 64-bit mask), for wave64 (CDNA) and wave32 (RDNA) targets,
// and still with nvcc. Written by `portagpu hipify`; safe to include twice.
#ifndef PORTAGPU_HIP_COMPAT_H
#define PORTAGPU_HIP_COMPAT_H

#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#  include <hip/hip_runtime.h>
#endif

// Lanes per warp/wavefront as a compile-time constant, per target.
#ifndef PORTAGPU_WARP_SIZE
#  if defined(__AMDGCN_WAVEFRONT_SIZE)
#    define PORTAGPU_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#  elif defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#    define PORTAGPU_WARP_SIZE 64  /* host pass: the widest AMD wavefront */
#  else
#    define PORTAGPU_WARP_SIZE 32
#  endif
#endif

// log2 of the warp width, for code that shifted by 5.
#ifndef PORTAGPU_WARP_SHIFT
#  if PORTAGPU_WARP_SIZE == 64
#    define PORTAGPU_WARP_SHIFT 6
#  else
#    define PORTAGPU_WARP_SHIFT 5
#  endif
#endif

// A mask with every lane set, 64 bits wide so HIP >= 6.3 accepts it; CUDA's
// 32-bit mask parameters take its low half.
#ifndef PORTAGPU_FULL_MASK
#  define PORTAGPU_FULL_MASK (~0ull)
#endif

#if (defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)) && defined(HIP_VERSION) && \
    (HIP_VERSION < 60200000 ||                                                              \
     (HIP_VERSION < 60300000 && !defined(HIP_ENABLE_WARP_SYNC_BUILTINS)))
// HIP before 6.2/6.3 has no *_sync warp functions: every lane of a wavefront
// runs in lockstep, so the mask-free forms are equivalent for full masks.
#  define PORTAGPU_DEFINES_WARP_SYNC 1
template <typename M, typename T>
__device__ inline T __shfl_sync(M, T var, int src, int width = PORTAGPU_WARP_SIZE) {
  return __shfl(var, src, width);
}
template <typename M, typename T>
__device__ inline T __shfl_up_sync(M, T var, unsigned int delta, int width = PORTAGPU_WARP_SIZE) {
  return __shfl_up(var, delta, width);
}
template <typename M, typename T>
__device__ inline T __shfl_down_sync(M, T var, unsigned int delta, int width = PORTAGPU_WARP_SIZE) {
  return __shfl_down(var, delta, width);
}
template <typename M, typename T>
__device__ inline T __shfl_xor_sync(M, T var, int mask, int width = PORTAGPU_WARP_SIZE) {
  return __shfl_xor(var, mask, width);
}
template <typename M>
__device__ inline unsigned long long __ballot_sync(M mask, int pred) {
  return __ballot(pred) & static_cast<unsigned long long>(mask);
}
template <typename M>
__device__ inline int __any_sync(M, int pred) { return __any(pred); }
template <typename M>
__device__ inline int __all_sync(M, int pred) { return __all(pred); }
__device__ inline unsigned long long __activemask() { return __ballot(1); }
template <typename M>
__device__ inline void __syncwarp(M) { __builtin_amdgcn_wave_barrier(); }
__device__ inline void __syncwarp() { __builtin_amdgcn_wave_barrier(); }
#endif

#endif  // PORTAGPU_HIP_COMPAT_H
