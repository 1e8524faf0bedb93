// PTX, tensor-core and library constructs that hipify cannot make portable.
#include <mma.h>  // expect: PG602
#include <cublas_v2.h>  // expect: PG605
#include <curand_kernel.h>  // expect: PG607
#include <cutlass/gemm/device/gemm.h>  // expect: PG603
#include <cooperative_groups.h>

namespace cg = cooperative_groups;
using namespace nvcuda;

__device__ unsigned lane_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));  // expect: PG601
  return r;
}

__global__ void tile_sum(const float* x, float* out) {
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());  // expect: PG506
  float v = x[threadIdx.x];
  for (int o = warp.size() / 2; o > 0; o /= 2) v += warp.shfl_down(v, o);
  if (warp.thread_rank() == 0) atomicAdd(out, v);
}

__global__ void scratch(float* x) {
  __shared__ float per_lane[warpSize];  // expect: PG509
  unsigned active = __activemask();  // expect: PG502
  per_lane[threadIdx.x % warpSize] = x[threadIdx.x] + active;
  x[threadIdx.x] = per_lane[0];
}

__global__ void init_rng(curandState* s) {
  curand_init(1234, threadIdx.x, 0, &s[threadIdx.x]);
}
