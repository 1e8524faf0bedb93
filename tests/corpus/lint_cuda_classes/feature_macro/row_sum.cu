// Tests a feature macro that features.cuh defines only off HIP: the cub path
// is never compiled by hipcc, the loop below it is the portable fallback.
// A macro the header defines for every build is no switch.
#include "features.cuh"

#ifdef DEMO_HAVE_CUB
#include <cub/cub.cuh>
#endif

__global__ void row_sum(const float* x, float* y, int n) {
  float acc = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += x[blockIdx.x * n + i];
  atomicAdd(&y[blockIdx.x], acc);
}

void total(const float* x, float* y, int n, cudaStream_t s) {
#ifdef DEMO_HAVE_CUB
  size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, x, y, n, s);
  return;
#endif
  row_sum<<<1, 256, 0, s>>>(x, y, n);
}

#ifdef DEMO_HAVE_FAST_SUM
__device__ float lane_sum(float v) {
  return v + __shfl_xor_sync(0xffffffff, v, 1);  // expect: PG501
}
#endif
