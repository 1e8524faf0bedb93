// Histogram with warp-aggregated atomics: lanes that fall in the same bin elect
// one leader, which adds the group's size (popcount of a 64-bit ballot) once.
// Correct at any warp width; on wave64 the ballot needs all 64 bits.
#include "warp.cuh"

// Bins privatised per block in shared memory (16 KiB); more bins go straight to
// global memory.
#define PG_HIST_SHARED_BINS 4096

// Bin of v in [lo, hi] with torch.histc's arithmetic (hi falls in the last bin); -1 outside.
__device__ __forceinline__ int pg_bin_of(float v, float lo, float hi, int bins) {
    if (!(v >= lo && v <= hi)) return -1;  // also drops NaN
    int bin = (int)((v - lo) * (float)bins / (hi - lo));
    return bin < bins ? bin : bins - 1;
}

// Called by every lane of the warp (uniform control flow); bin < 0 adds nothing.
__device__ __forceinline__ void pg_warp_aggregated_add(unsigned int* counts, int bin) {
    pg_ballot_t pending = pg_ballot(bin >= 0);
    while (pending) {  // warp-uniform: every lane sees the same ballot
        const int leader = pg_first_lane(pending);
        const int leader_bin = pg_shfl(bin, leader);
        const pg_ballot_t group = pg_ballot(bin == leader_bin);
        if (pg_lane_id() == leader) atomicAdd(&counts[leader_bin], (unsigned int)pg_popcount(group));
        pending &= ~group;
    }
}

// Grid-stride over tiles of blockDim.x elements. With few enough bins each block
// counts into shared memory and adds its counts to global memory once at the end.
extern "C" __global__ void pg_histogram_f32(const float* __restrict__ x, unsigned int* __restrict__ counts,
                                            long long n, int bins, float lo, float hi) {
    __shared__ unsigned int block_counts[PG_HIST_SHARED_BINS];
    const bool privatise = bins <= PG_HIST_SHARED_BINS;
    unsigned int* local = privatise ? block_counts : counts;
    if (privatise) {
        for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;
    }
    __syncthreads();
    // The tile loop bound is the same for the whole block, so every lane reaches every ballot.
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < n; base += stride) {
        const long long i = base + threadIdx.x;
        pg_warp_aggregated_add(local, i < n ? pg_bin_of(x[i], lo, hi, bins) : -1);
    }
    if (privatise) {
        __syncthreads();
        for (int b = threadIdx.x; b < bins; b += blockDim.x) {
            if (block_counts[b]) atomicAdd(&counts[b], block_counts[b]);
        }
    }
}
