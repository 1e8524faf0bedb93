// Per-warp partial results kept with the warp index in the last dimension
// (`part[k][warp]`), read back by lane under a count of 32-lane warps. A tile
// of 32 columns indexed by thread, never per warp, is data.
__device__ void block_pair_sum(float* v) {
  static __shared__ float part[2][32];  // expect: PG507
  int lane = threadIdx.x & 31;  // expect: PG504
  int warp = threadIdx.x >> 5;  // expect: PG504
  if (lane == 0) {
    part[0][warp] = v[0];
    part[1][warp] = v[1];
  }
  __syncthreads();
  if (threadIdx.x < (blockDim.x >> 5)) {  // expect: PG504
    v[0] = part[0][lane];
    v[1] = part[1][lane];
  }
}

__global__ void transpose_rows(const float* x, float* y, int rows) {
  __shared__ float tile[8][32];
  int r = blockIdx.x * 8;
  for (int i = 0; i < 8 && r + i < rows; ++i) tile[i][threadIdx.x] = x[(r + i) * 32 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x < 8) y[r + threadIdx.x] = tile[threadIdx.x][0];
}
