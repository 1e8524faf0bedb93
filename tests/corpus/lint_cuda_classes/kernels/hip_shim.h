// A vendor shim compiled only by HIP: it includes the ROCm runtime outright and
// maps cuBLAS names and *_sync shuffles onto their HIP forms. Nothing here is
// CUDA to port, cuBLAS names included.
#pragma once
#include <hip/hip_runtime.h>
#include <hipblas/hipblas.h>

#define cublasHandle_t hipblasHandle_t
#define cublasCreate hipblasCreate
#define __shfl_xor_sync(mask, var, lane_mask, width) __shfl_xor(var, lane_mask, width)
