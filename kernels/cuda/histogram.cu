// Histogram with warp-aggregated atomics: lanes that fall in the same bin
// (pg_match_any: one instruction on NVIDIA, ballot rounds on AMD) elect one
// leader, which adds the group's size (popcount of a 64-bit mask) once.
// Correct at any warp width; on wave64 the masks need all 64 bits.
#include "warp.cuh"


// Bin of v in [lo, hi] with torch.histc's arithmetic (hi falls in the last bin); -1 outside.
__device__ __forceinline__ int pg_bin_of(float v, float lo, float hi, int bins) {
    if (!(v >= lo && v <= hi)) return -1;  // also drops NaN
    int bin = (int)((v - lo) * (float)bins / (hi - lo));
    return bin < bins ? bin : bins - 1;
}

// Called by every lane of the warp (uniform control flow); bin < 0 adds nothing.
// Lanes with the same bin elect their lowest lane, which adds the group's size.
__device__ __forceinline__ void pg_warp_aggregated_add(unsigned int* counts, int bin) {
    const pg_ballot_t peers = pg_match_any(bin);
    if (bin >= 0 && pg_first_lane(peers) == pg_lane_id()) {
        atomicAdd(&counts[bin], (unsigned int)pg_popcount(peers));
    }
}

// Aggregate only where it pays: when many lanes share a bin their atomics would
// serialise, but on spread-out data finding the groups costs more than it saves.
// The test (how many lanes share lane 0's bin) is warp-uniform, so both paths are.
__device__ __forceinline__ void pg_histogram_add(unsigned int* counts, int bin) {
    const bool crowded = pg_popcount(pg_ballot(bin == pg_shfl(bin, 0))) > PORTAGPU_WARP_SIZE / 4;
    if (crowded) {
        pg_warp_aggregated_add(counts, bin);
    } else if (bin >= 0) {
        atomicAdd(&counts[bin], 1u);
    }
}

// Elements per thread per tile: their loads are issued together, before any
// of the (dependent) warp votes.
#define PG_HIST_ITEMS 4

// Grid-stride over tiles of PG_HIST_ITEMS * blockDim.x elements. When the
// launch gives dynamic shared memory for the bins (bins * 4 bytes), each block
// counts there and adds its counts to global memory once at the end; with none,
// it counts straight into global memory.
extern "C" __global__ void pg_histogram_f32(const float* __restrict__ x, unsigned int* __restrict__ counts,
                                            long long n, int bins, float lo, float hi, int privatise) {
    extern __shared__ unsigned int block_counts[];
    unsigned int* local = privatise ? block_counts : counts;
    if (privatise) {
        for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;
    }
    __syncthreads();
    // The tile loop bound is the same for the whole block, so every lane reaches every vote.
    const long long tile = (long long)blockDim.x * PG_HIST_ITEMS;
    for (long long base = (long long)blockIdx.x * tile; base < n; base += (long long)gridDim.x * tile) {
        int bin[PG_HIST_ITEMS];
#pragma unroll
        for (int k = 0; k < PG_HIST_ITEMS; ++k) {
            const long long i = base + (long long)k * blockDim.x + threadIdx.x;  // coalesced
            bin[k] = i < n ? pg_bin_of(x[i], lo, hi, bins) : -1;
        }
#pragma unroll
        for (int k = 0; k < PG_HIST_ITEMS; ++k) pg_histogram_add(local, bin[k]);
    }
    if (privatise) {
        __syncthreads();
        for (int b = threadIdx.x; b < bins; b += blockDim.x) {
            if (block_counts[b]) atomicAdd(&counts[b], block_counts[b]);
        }
    }
}
