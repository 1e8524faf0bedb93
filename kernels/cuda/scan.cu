// Inclusive prefix sum (cumsum) along rows: shuffles scan each warp, warp 0 scans
// the warp totals, and each block writes its total so that the caller can scan the
// totals (the same kernel, recursively) and add them back with pg_scan_add_f32.
// Grid: x = blocks along the row, y = rows.
#include "warp.cuh"

extern "C" __global__ void pg_scan_f32(const float* __restrict__ x, float* __restrict__ out,
                                       float* __restrict__ block_totals, long long cols) {
    __shared__ float warp_totals[PORTAGPU_MAX_WARPS];
    const long long row = blockIdx.y;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float value = i < cols ? x[row * cols + i] : 0.0f;

    value = pg_warp_inclusive_scan(value);
    if (pg_lane_id() == PORTAGPU_WARP_SIZE - 1) warp_totals[pg_warp_id()] = value;
    __syncthreads();
    if (pg_warp_id() == 0) {
        float total = pg_lane_id() < pg_warps_in_block() ? warp_totals[pg_lane_id()] : 0.0f;
        total = pg_warp_inclusive_scan(total);
        if (pg_lane_id() < pg_warps_in_block()) warp_totals[pg_lane_id()] = total;
    }
    __syncthreads();
    if (pg_warp_id() > 0) value += warp_totals[pg_warp_id() - 1];
    if (i < cols) out[row * cols + i] = value;
    if (threadIdx.x == blockDim.x - 1) block_totals[row * gridDim.x + blockIdx.x] = value;
}

// out[row, i] += inclusive_totals[row, block - 1] for every block but the first.
extern "C" __global__ void pg_scan_add_f32(float* __restrict__ out, const float* __restrict__ inclusive_totals,
                                           long long cols) {
    if (blockIdx.x == 0) return;
    const long long row = blockIdx.y;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < cols) out[row * cols + i] += inclusive_totals[row * gridDim.x + blockIdx.x - 1];
}
