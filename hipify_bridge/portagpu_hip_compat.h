// portagpu_hip_compat.h: lets one translated source build on HIP 5.x (no *_sync
// warp builtins, 64-bit __ballot) and on HIP >= 6.3 (*_sync builtins that
// static_assert a 64-bit mask), for wave64 (CDNA) and wave32 (RDNA) targets,
// and still with nvcc. Written by `portagpu hipify`; safe to include twice.
#ifndef PORTAGPU_HIP_COMPAT_H
#define PORTAGPU_HIP_COMPAT_H

#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#  include <hip/hip_runtime.h>
#endif

// Compiling for an AMD GPU (hipcc or hiprtc, host or device pass)?
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__) || defined(__AMDGCN_WAVEFRONT_SIZE)
#  define PORTAGPU_ON_AMD 1
#else
#  define PORTAGPU_ON_AMD 0
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

// A mask with every lane set: 64 bits on HIP (HIP >= 6.3 wants a 64-bit mask),
// 32 bits under nvcc (CUDA's masks are 32 bits).
#ifndef PORTAGPU_FULL_MASK
#  if PORTAGPU_ON_AMD
#    define PORTAGPU_FULL_MASK (~0ull)
#  else
#    define PORTAGPU_FULL_MASK (~0u) /* nvcc: CUDA masks are 32 bits */
#  endif
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

// --- logical 32-lane warps (the logical32 model) ----------------------------------
// A kernel whose code fixes the warp at 32 lanes keeps 32-lane warps on a wave64:
// lanes 0-31 and 32-63 of a wavefront are two logical warps. Shuffles get width
// 32 at the call; ballots, votes and masks read or name this lane's half.
#ifndef PORTAGPU_LOGICAL_WARP_SIZE
#  define PORTAGPU_LOGICAL_WARP_SIZE 32
#endif
#if PORTAGPU_ON_AMD
// first lane of this lane's logical warp within the wavefront (0 or 32)
__device__ inline unsigned portagpu_half_base() {
  return PORTAGPU_WARP_SIZE == 64 ? (__lane_id() & 32u) : 0u;
}
template <typename M>
__device__ inline unsigned long long portagpu_half_mask(M mask) {
  return static_cast<unsigned long long>(static_cast<unsigned>(mask)) << portagpu_half_base();
}
template <typename M>
__device__ inline unsigned portagpu_ballot32(M mask, int pred) {
  return static_cast<unsigned>(__ballot(pred) >> portagpu_half_base()) & static_cast<unsigned>(mask);
}
__device__ inline unsigned portagpu_activemask32() {
  return static_cast<unsigned>(__ballot(1) >> portagpu_half_base());
}
template <typename M>
__device__ inline int portagpu_any32(M mask, int pred) { return portagpu_ballot32(mask, pred) != 0u; }
template <typename M>
__device__ inline int portagpu_all32(M mask, int pred) {
  const unsigned live = static_cast<unsigned>(mask) & portagpu_activemask32();
  return (portagpu_ballot32(mask, pred) & live) == live;
}
#else  // nvcc: a CUDA warp is the logical warp
template <typename M>
__device__ inline unsigned portagpu_half_mask(M mask) { return static_cast<unsigned>(mask); }
template <typename M>
__device__ inline unsigned portagpu_ballot32(M mask, int pred) { return __ballot_sync(static_cast<unsigned>(mask), pred); }
__device__ inline unsigned portagpu_activemask32() { return __activemask(); }
template <typename M>
__device__ inline int portagpu_any32(M mask, int pred) { return __any_sync(static_cast<unsigned>(mask), pred); }
template <typename M>
__device__ inline int portagpu_all32(M mask, int pred) { return __all_sync(static_cast<unsigned>(mask), pred); }
#endif

// --- CUDA constructs HIP lacks, where a HIP equivalent exists ---------------------

// Cache-hinted loads/stores (__ldcs, __stcs, ...): the hint is dropped.
template <typename T>
__device__ inline T portagpu_load(const T* p) { return *p; }
template <typename T>
__device__ inline void portagpu_store(T* p, T v) { *p = v; }


#endif  // PORTAGPU_HIP_COMPAT_H

// Cooperative-groups shims, outside the main guard: a later inclusion that asks
// for them (PORTAGPU_CG_SHIMS) still gets them.
#if defined(PORTAGPU_CG_SHIMS) && !defined(PORTAGPU_CG_SHIMS_DEFINED)
#  define PORTAGPU_CG_SHIMS_DEFINED 1
#  if PORTAGPU_ON_AMD
#    include <hip/hip_cooperative_groups.h>
#    include <type_traits>
// thread_block_tile::meta_group_rank()/meta_group_size() (CUDA 11) are absent in HIP 5.x.
template <typename Tile>
__device__ inline unsigned portagpu_meta_group_rank(const Tile& tile) {
  const unsigned rank = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  return rank / tile.size();
}
template <typename Tile>
__device__ inline unsigned portagpu_meta_group_size(const Tile& tile) {
  return (blockDim.x * blockDim.y * blockDim.z + tile.size() - 1) / tile.size();
}
// HIP 5.x tile shuffles take only integer/floating-point values: other types
// (uint4, float3, structs) move 32 bits at a time within the tile.
template <typename T>
struct portagpu_words {
  static constexpr unsigned count = (sizeof(T) + 3) / 4;
};
#    define PORTAGPU_TILE_SHUFFLE(NAME, BUILTIN)                                           \
  template <typename Tile, typename T, typename A>                                         \
  __device__ inline T NAME(const Tile& tile, T value, A arg) {                             \
    if constexpr (std::is_integral<T>::value || std::is_floating_point<T>::value) {        \
      return tile.BUILTIN(value, arg);                                                     \
    } else {                                                                               \
      int words[portagpu_words<T>::count] = {};                                            \
      __builtin_memcpy(words, &value, sizeof(T));                                          \
      for (unsigned i = 0; i < portagpu_words<T>::count; ++i)                              \
        words[i] = __##BUILTIN(words[i], arg, tile.size());                                \
      __builtin_memcpy(&value, words, sizeof(T));                                          \
      return value;                                                                        \
    }                                                                                      \
  }
PORTAGPU_TILE_SHUFFLE(portagpu_shfl, shfl)
PORTAGPU_TILE_SHUFFLE(portagpu_shfl_up, shfl_up)
PORTAGPU_TILE_SHUFFLE(portagpu_shfl_down, shfl_down)
PORTAGPU_TILE_SHUFFLE(portagpu_shfl_xor, shfl_xor)
#    undef PORTAGPU_TILE_SHUFFLE
// cooperative_groups/reduce.h and scan.h do not exist in HIP: the same calls,
// built on the tile's shuffles (a tile of up to one wavefront).
namespace cooperative_groups {
template <typename T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <typename T> struct less { __device__ T operator()(T a, T b) const { return b < a ? b : a; } };
template <typename T> struct greater { __device__ T operator()(T a, T b) const { return a < b ? b : a; } };
template <typename T> struct bit_and { __device__ T operator()(T a, T b) const { return a & b; } };
template <typename T> struct bit_or { __device__ T operator()(T a, T b) const { return a | b; } };
template <typename T> struct bit_xor { __device__ T operator()(T a, T b) const { return a ^ b; } };
template <typename Tile, typename T, typename Op>
__device__ inline T reduce(const Tile& tile, T value, Op op) {
  for (unsigned offset = tile.size() / 2; offset > 0; offset /= 2) {
    value = op(value, tile.shfl_xor(value, offset));
  }
  return value;
}
template <typename Tile, typename T, typename Op>
__device__ inline T inclusive_scan(const Tile& tile, T value, Op op) {
  for (unsigned offset = 1; offset < tile.size(); offset *= 2) {
    const T other = tile.shfl_up(value, offset);
    if (tile.thread_rank() >= offset) value = op(value, other);
  }
  return value;
}
template <typename Tile, typename T>
__device__ inline T inclusive_scan(const Tile& tile, T value) {
  return inclusive_scan(tile, value, plus<T>());
}
template <typename Tile, typename T, typename Op>
__device__ inline T exclusive_scan(const Tile& tile, T value, Op op) {
  const T inclusive = inclusive_scan(tile, value, op);
  const T shifted = tile.shfl_up(inclusive, 1);
  return tile.thread_rank() == 0 ? T() : shifted;
}
template <typename Tile, typename T>
__device__ inline T exclusive_scan(const Tile& tile, T value) {
  return exclusive_scan(tile, value, plus<T>());
}
}  // namespace cooperative_groups
#  else
#    include <cooperative_groups.h>
#    include <cooperative_groups/reduce.h>
#    include <cooperative_groups/scan.h>
template <typename Tile>
__device__ inline unsigned portagpu_meta_group_rank(const Tile& tile) { return tile.meta_group_rank(); }
template <typename Tile>
__device__ inline unsigned portagpu_meta_group_size(const Tile& tile) { return tile.meta_group_size(); }
template <typename Tile, typename T, typename A>
__device__ inline T portagpu_shfl(const Tile& tile, T v, A a) { return tile.shfl(v, a); }
template <typename Tile, typename T, typename A>
__device__ inline T portagpu_shfl_up(const Tile& tile, T v, A a) { return tile.shfl_up(v, a); }
template <typename Tile, typename T, typename A>
__device__ inline T portagpu_shfl_down(const Tile& tile, T v, A a) { return tile.shfl_down(v, a); }
template <typename Tile, typename T, typename A>
__device__ inline T portagpu_shfl_xor(const Tile& tile, T v, A a) { return tile.shfl_xor(v, a); }
#  endif
#endif  // PORTAGPU_CG_SHIMS

// math_constants.h (CUDART_*) does not exist in HIP: the constants it names.
#if defined(PORTAGPU_MATH_CONSTANTS) && !defined(PORTAGPU_MATH_CONSTANTS_DEFINED)
#  define PORTAGPU_MATH_CONSTANTS_DEFINED 1
#  define CUDART_INF_F __builtin_huge_valf()
#  define CUDART_NAN_F __builtin_nanf("")
#  define CUDART_INF __builtin_huge_val()
#  define CUDART_NAN __builtin_nan("")
#  define CUDART_ZERO_F 0.0f
#  define CUDART_ONE_F 1.0f
#  define CUDART_NEG_ZERO_F (-0.0f)
#  define CUDART_MAX_NORMAL_F 3.40282347e+38f
#  define CUDART_MIN_DENORM_F 1.40129846e-45f
#  define CUDART_PI_F 3.14159265358979323846f
#  define CUDART_PIO2_F 1.57079632679489661923f
#  define CUDART_PIO4_F 0.78539816339744830962f
#  define CUDART_2_OVER_PI_F 0.63661977236758134308f
#  define CUDART_SQRT_TWO_F 1.41421356237309504880f
#  define CUDART_SQRT_HALF_F 0.70710678118654752440f
#  define CUDART_L2E_F 1.44269504088896340736f
#  define CUDART_LN2_F 0.69314718055994530942f
#  define CUDART_LNT_F 2.30258509299404568402f
#  define CUDART_PI 3.14159265358979323846
#  define CUDART_PIO2 1.57079632679489661923
#  define CUDART_SQRT_2PI 2.50662827463100050242
#  define CUDART_L2E 1.44269504088896340736
#  define CUDART_LN2 0.69314718055994530942
#endif
// atomicAdd on __half / __half2 (absent in HIP 5.2): compare-and-swap on the
// 32-bit word that holds the value; every other type goes to atomicAdd.
#if defined(PORTAGPU_HALF_ATOMICS) && !defined(PORTAGPU_HALF_ATOMICS_DEFINED)
#  define PORTAGPU_HALF_ATOMICS_DEFINED 1
template <typename T, typename U>
__device__ inline T portagpu_atomic_add(T* address, U value) { return atomicAdd(address, value); }
#  if PORTAGPU_ON_AMD
#    include <hip/hip_fp16.h>
__device__ inline __half portagpu_atomic_add(__half* address, __half value) {
  unsigned* word = reinterpret_cast<unsigned*>(reinterpret_cast<size_t>(address) & ~size_t(3));
  const unsigned shift = (reinterpret_cast<size_t>(address) & 2) ? 16u : 0u;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    const __half sum = __hadd(__ushort_as_half(static_cast<unsigned short>(assumed >> shift)), value);
    const unsigned bits = static_cast<unsigned>(__half_as_ushort(sum)) << shift;
    old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | bits);
  } while (assumed != old);
  return __ushort_as_half(static_cast<unsigned short>(old >> shift));
}
__device__ inline __half2 portagpu_atomic_add(__half2* address, __half2 value) {
  unsigned* word = reinterpret_cast<unsigned*>(address);
  unsigned old = *word, assumed;
  do {
    assumed = old;
    __half2 current;
    __builtin_memcpy(&current, &assumed, 4);
    const __half2 sum = __hadd2(current, value);
    unsigned bits;
    __builtin_memcpy(&bits, &sum, 4);
    old = atomicCAS(word, assumed, bits);
  } while (assumed != old);
  __half2 previous;
  __builtin_memcpy(&previous, &old, 4);
  return previous;
}
#  endif
#endif  // PORTAGPU_HALF_ATOMICS

// end of portagpu_hip_compat.h
