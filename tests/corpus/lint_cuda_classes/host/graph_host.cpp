// Host C++ that calls cuDNN's backend (graph) API: no device code, yet it
// ports no more 1:1 than a .cu file would (MIOpen has no operation graphs).
#include <cudnn.h>  // expect: PG606
#include <vector>

int build_pointwise(cudnnHandle_t handle) {
  cudnnBackendDescriptor_t op;  // expect: PG611
  cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &op);  // expect: PG611
  return cudnnBackendFinalize(op) == CUDNN_STATUS_SUCCESS ? 0 : 1;  // expect: PG611
}
