// Warp loops whose 32 is hidden in their shape: a tree reduction whose first
// offset is written as a division, and a broadcast loop that reads every
// source lane of a 32-lane warp. Traps: a broadcast loop with an explicit
// width of 32 (each group reads its own lanes), a loop over 32 items that
// never shuffles, and a division that is not the first offset.
#define FULL (~0ull)

__device__ float tree_sum(float v) {
  for (int hop = 32 / 2; hop > 0; hop /= 2) {  // expect: PG505
    v += WARP_SHFL_DOWN_SYNC(FULL, v, hop);
  }
  return v;
}

__device__ void gather_rows(int row, int *rows) {
  for (int src = 0; src < 32; ++src) {  // expect: PG505
    rows[src] = __shfl_sync(FULL, row, src);
  }
}

__device__ void gather_grouped(int row, int *rows) {
  for (int src = 0; src < 32; ++src) {
    rows[src] = __shfl_sync(FULL, row, src, 32);
  }
}

__device__ float plain_sum(const float *x) {
  float s = 0.f;
  for (int i = 0; i < 32; ++i) s += x[i];
  return s;
}

__device__ float halves(float v, int n) {
  for (int k = n / 2; k > 0; k /= 2) v += __shfl_down_sync(FULL, v, k);
  return v;
}
