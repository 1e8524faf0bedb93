// Error-check macros for NVIDIA libraries: the includes are the findings; the
// macro bodies that name the libraries' types report nothing more.
#pragma once
#include <cublas_v2.h>  // expect: PG605
#include <curand.h>  // expect: PG607

#define BLAS_OK(call)                                   \
  do {                                                  \
    cublasStatus_t status_ = (call);                    \
    if (status_ != CUBLAS_STATUS_SUCCESS) abort();      \
  } while (0)

#define RAND_OK(call)                                   \
  do {                                                  \
    curandStatus_t status_ = (call);                    \
    if (status_ != CURAND_STATUS_SUCCESS) abort();      \
  } while (0)

__device__ inline int lane_of_thread() { return threadIdx.x % warpSize; }
