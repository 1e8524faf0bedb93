// Tests the platform header's CUDA-named macro: its #else is the AMD build,
// so the PTX in the CUDA arm never reaches hipcc (the switch lives in
// platform.hpp, which this file includes).
#include "platform.hpp"

__device__ inline void store_pair(unsigned* dst, unsigned a, unsigned b) {
#if defined(DEMO_DEVICE_CUDA)
  asm volatile("st.volatile.global.v2.u32 [%0], {%1,%2};" ::"l"(dst), "r"(a), "r"(b));
#else
  __builtin_nontemporal_store(a, dst);
  __builtin_nontemporal_store(b, dst + 1);
#endif
}

__device__ inline unsigned lane_bits(unsigned v) {
  return __shfl_sync(0xffffffff, v, 0);  // expect: PG501
}
