// The project's HIP port: a header only hipcc sees. Nothing here breaks on AMD.
#pragma once
#include <hip/hip_runtime.h>

#define __shfl_xor_sync(mask, v, lane, width) __shfl_xor(v, lane, width)
#define cudaStream_t hipStream_t

static __device__ __forceinline__ int wave_lane() { return __lane_id(); }
