// Warp code hidden in function-like macro bodies.
#pragma once

#define WARP_ALL_REDUCE(v)                              \
  do {                                                  \
    for (int s_ = 16; s_ > 0; s_ >>= 1)  /* expect: PG505 */ \
      (v) += __shfl_xor_sync(0xffffffff, (v), s_);  /* expect: PG501 */ \
  } while (0)

#define READ_LANE_ID(out) asm volatile("mov.u32 %0, %%laneid;" : "=r"(out))  // expect: PG601

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
#define ROUND_TO_32(x) (CEIL_DIV((x), 32) * 32)

__device__ float block_total(float v) {
  WARP_ALL_REDUCE(v);
  return v;
}
