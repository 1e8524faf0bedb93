// Warp-width assumptions beyond `% 32` and `/ 32`.
#include <cuda_runtime.h>
typedef unsigned int U32;

#define NUM_WARPS 8
__global__ void __launch_bounds__(NUM_WARPS * 32) raster(float* out) {  // expect: PG504
  out[threadIdx.x] = 0.f;
}

template <typename T>
__device__ T block_reduce(T* smem, T val) {
  int tid = threadIdx.x;
  smem[tid] = val;
  __syncthreads();
  if (tid < 32) {  // expect: PG504
    T acc = smem[tid] + smem[tid + 32];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(~0ull, acc, o);  // expect: PG505
    val = acc;
  }
  return val;
}

__global__ void per_warp_sums(const float* x, float* out) {
  // one slot per 32-lane warp: over-allocated on wave64, reads stay in bounds
  static __shared__ float partial[32];
  int lane = threadIdx.x % warpSize;
  int wid = threadIdx.x / warpSize;
  float v = x[threadIdx.x];
  if (lane == 0) partial[wid] = v;
  __syncthreads();
  if (wid == 0) out[blockIdx.x] = partial[lane];
}

__global__ void segmented_scan(const int* keys, float* vals, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = i & (32 - 1);  // expect: PG504
  float v = i < n ? vals[i] : 0.f;
  for (int d = 1; d < 32; d *= 2) {  // expect: PG505
    float up = __shfl_up_sync(~0ull, v, d);
    if (lane >= d) v += up;
  }
  if (lane == 32 - 1 && i < n) vals[i] = v;  // expect: PG504
}

__device__ bool leader_of(bool p) {
  U32 votes = __ballot_sync(~0ull, p);  // expect: PG503
  return votes != 0;
}

__global__ void tile_copy(const float* in, float* out, int w) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x;
  if (threadIdx.x < 32) tile[threadIdx.y][threadIdx.x] = in[x];
  __syncthreads();
  out[x] = tile[threadIdx.x][threadIdx.y];
}
