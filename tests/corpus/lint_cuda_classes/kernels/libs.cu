// Library use: what hipify renames 1:1 is not a break; what it cannot is
// reported where it is used.
#include "cublas_helpers.h"  // the project's own header, not cuBLAS
#include <cublasLt.h>        // expect: PG605
#include <cudnn_frontend.h>  // expect: PG606

void pick_epilogue(cublasLtMatmulDesc_t desc, bool gelu, bool backward) {
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
  if (gelu) {
    epi = backward ? CUBLASLT_EPILOGUE_DGELU : CUBLASLT_EPILOGUE_GELU_AUX_BIAS;  // expect: PG611
  } else if (backward) {
    epi = CUBLASLT_EPILOGUE_BGRADB;  // expect: PG611
  }
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi));
}

void run_graph(cudnnHandle_t handle) {
  auto graph = std::make_shared<cudnn_frontend::graph::Graph>();  // expect: PG611
  graph->build_operation_graph(handle);
}
