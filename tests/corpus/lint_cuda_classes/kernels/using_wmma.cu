// WMMA reached through a using-directive, its header included by a project
// header: the first use of the library is the directive, reported there.
#include "project_common.h"

using namespace nvcuda;  // expect: PG602

__global__ void tile_fill(half* out) {
  wmma::fragment<wmma::accumulator, 16, 16, 16, half> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}
