// A warp that gathers one value from every lane into per-thread arrays sized
// for 32 lanes: on a wave64 the loop and both arrays are half as long as the
// wavefront. Traps: a 32-element tile that no lane loop fills, and arrays
// filled by a loop that keeps its reads inside 32-lane groups.
#define ALL_LANES 0xffffffffu  // expect: PG501

template <bool WITH_WEIGHTS>
__global__ void gather_neighbours(const int *cols, const float *weights, float *out, int n) {
  int lane = threadIdx.x & (warpSize - 1);
  int col, nbr[32];  // expect: PG505
  float wt, wts[WITH_WEIGHTS ? 32 : 1];  // expect: PG505
  float tile[32];
  col = cols[lane];
  wt = WITH_WEIGHTS ? weights[lane] : 1.f;
  for (int src = 0; src < 32; src++) {  // expect: PG505
    nbr[src] = __shfl_sync(ALL_LANES, col, src);
    if (WITH_WEIGHTS) wts[src] = __shfl_sync(ALL_LANES, wt, src);
  }
  for (int k = 0; k < 32; ++k) tile[k] = 0.f;
  out[lane] = tile[lane] + nbr[lane] * wts[WITH_WEIGHTS ? lane : 0];
}

__global__ void grouped_gather(const int *cols, int *out) {
  int lane = threadIdx.x % warpSize;
  int mine = cols[lane], seen[32];
  for (int src = 0; src < 32; ++src) {
    seen[src] = __shfl_sync(ALL_LANES, mine, src, 32);
  }
  out[lane] = seen[lane];
}
