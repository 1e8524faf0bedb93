// Warp-32 shuffle reduction, a 32-bit ballot and a cub call: the "done when" file.
#include <cuda_runtime.h>
#include <cub/cub.cuh>  // expect: PG604

#define WARP_SIZE 32  // expect: PG508
#define FULL_MASK 0xffffffff  // expect: PG501

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)  // expect: PG505
    v += __shfl_down_sync(FULL_MASK, v, offset);
  return v;
}

__global__ void block_sum(const float* __restrict__ x, float* out, int n) {
  __shared__ float partial[256 / 32];  // expect: PG507
  int tid = threadIdx.x;
  int lane = tid % 32;  // expect: PG504
  int warp = tid / WARP_SIZE;
  float v = tid < n ? x[tid] : 0.0f;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / WARP_SIZE ? partial[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) *out = v;
  }
}

__global__ void count_positive(const float* x, int* count) {
  unsigned int votes = __ballot_sync(0xffffffff, x[threadIdx.x] > 0.0f);  // expect: PG501 PG503
  if ((threadIdx.x & 31) == 0) atomicAdd(count, __popc(votes));  // expect: PG504 PG503
}

__global__ void cub_block_sum(const float* x, float* out) {
  using BlockReduce = cub::BlockReduce<float, 256>;
  __shared__ typename BlockReduce::TempStorage temp;
  float total = BlockReduce(temp).Sum(x[threadIdx.x]);
  if (threadIdx.x == 0) *out = total;
}
