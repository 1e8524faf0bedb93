// Sum and max reductions: warp shuffles, then a block reduction through shared
// memory. Whole vectors take two passes (one partial per block, then one block
// over the partials); rows take one block each.
#include "warp.cuh"

#define PG_NEG_INF __int_as_float(0xff800000u)

template <typename Op>
__device__ __forceinline__ void pg_reduce_vector(const float* __restrict__ x, float* __restrict__ partials,
                                                 long long n, Op op, float identity) {
    float acc = identity;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        acc = op(acc, x[i]);
    }
    acc = pg_block_reduce(acc, op, identity);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

template <typename Op>
__device__ __forceinline__ void pg_reduce_row(const float* __restrict__ x, float* __restrict__ out,
                                              long long cols, Op op, float identity) {
    const float* row = x + (long long)blockIdx.x * cols;
    // four independent accumulators keep four loads in flight per thread
    float acc0 = identity, acc1 = identity, acc2 = identity, acc3 = identity;
    const long long step = blockDim.x;
    long long j = threadIdx.x;
    for (; j + 3 * step < cols; j += 4 * step) {
        acc0 = op(acc0, row[j]);
        acc1 = op(acc1, row[j + step]);
        acc2 = op(acc2, row[j + 2 * step]);
        acc3 = op(acc3, row[j + 3 * step]);
    }
    for (; j < cols; j += step) acc0 = op(acc0, row[j]);
    float acc = pg_block_reduce(op(op(acc0, acc1), op(acc2, acc3)), op, identity);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

extern "C" __global__ void pg_sum_f32(const float* __restrict__ x, float* __restrict__ partials, long long n) {
    pg_reduce_vector(x, partials, n, PgSum(), 0.0f);
}

extern "C" __global__ void pg_max_f32(const float* __restrict__ x, float* __restrict__ partials, long long n) {
    pg_reduce_vector(x, partials, n, PgMax(), PG_NEG_INF);
}

extern "C" __global__ void pg_row_sum_f32(const float* __restrict__ x, float* __restrict__ out, long long cols) {
    pg_reduce_row(x, out, cols, PgSum(), 0.0f);
}

extern "C" __global__ void pg_row_max_f32(const float* __restrict__ x, float* __restrict__ out, long long cols) {
    pg_reduce_row(x, out, cols, PgMax(), PG_NEG_INF);
}
