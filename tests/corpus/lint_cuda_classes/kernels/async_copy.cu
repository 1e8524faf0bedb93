// A staged copy into shared memory through CUDA's pipeline primitives
// (cp.async), which HIP does not provide.
#include <cuda_pipeline_primitives.h>  // expect: PG612
#include "pipeline_stages.h"

__global__ void stage(const float4* g, float4* out) {
  __shared__ float4 tile[128];
  __pipeline_memcpy_async(&tile[threadIdx.x], &g[threadIdx.x], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x];
}
