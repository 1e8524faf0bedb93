// Device code behind a project's own qualifier macro (defined in another
// header): no CUDA qualifier in this file, but __syncthreads says it is CUDA.
#pragma once
#include "vote_wrappers.cuh"

struct block_votes_t {
  int counts[8];

  LIB_DEVICE int total(int lane, int warp, bool p) {
    int bits = warp_ballot(p);  // expect: PG503
    if (lane == 0) counts[warp] = __popc(bits);
    __syncthreads();
    return counts[0];
  }
};
