// Lane masks that are not all ones but still 32 bits wide (HIP's *_sync
// functions reject every mask narrower than 64 bits), and an `#if 0` branch
// the compiler never sees.
#include <cstdint>

__device__ float half_warp_sum(float v) {
  for (int o = 8; o > 0; o /= 2) v += __shfl_down_sync(0x0000ffff, v, o);  // expect: PG501
  return v;
}

__device__ float typo_mask_sum(float v) {
  v += __shfl_down_sync(0xfffffff, v, 1);  // expect: PG501
  v += __shfl_down_sync(0xffffffffffffffffull, v, 2);
  return v;
}

#if 0
__device__ float retired(float v) {
  return __shfl_xor_sync(0xffffffff, v, 1);
}
#else
__device__ float kept(float v) {
  return __shfl_xor_sync(uint32_t(-1), v, 1);  // expect: PG501
}
#endif

__device__ unsigned low_bits(unsigned x) { return x & 0x0000ffff; }
