// CuTe used through a project header: each call into it is a break, not only
// the include that lives elsewhere.
#include "tile_config.h"

__global__ void stage(float* g, int n) {
  auto src = cute::make_tensor(cute::make_gmem_ptr(g), cute::make_shape(n, 8));  // expect: PG603
  auto shape = cute::make_shape(4, 8);  // expect: PG603
  cutlass::arch::synclog_setup();  // expect: PG603
  g[0] = static_cast<float>(cute::size(shape));  // expect: PG603
}
