// Warp primitives written once for every warp width: 32 lanes (NVIDIA, AMD RDNA)
// and 64 lanes (AMD CDNA). Kernels include this header and never spell a lane
// count or a lane mask themselves, so hipify has nothing warp-specific to get wrong.
#ifndef PORTAGPU_WARP_CUH
#define PORTAGPU_WARP_CUH

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#define PORTAGPU_HIP 1
#endif

// Lanes per warp. portagpu's runtime passes PORTAGPU_WARP_SIZE (or WARP_SIZE) for
// the device it compiles for; without it, the compiler's own value is used.
#ifndef PORTAGPU_WARP_SIZE
#if defined(WARP_SIZE)
#define PORTAGPU_WARP_SIZE WARP_SIZE
#elif defined(PORTAGPU_HIP) && defined(__AMDGCN_WAVEFRONT_SIZE__)
#define PORTAGPU_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE__
#elif defined(PORTAGPU_HIP) && defined(__AMDGCN_WAVEFRONT_SIZE)
#define PORTAGPU_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#elif defined(PORTAGPU_HIP)
// Host pass of a HIP compile: no device code runs here, the value only sizes types.
#define PORTAGPU_WARP_SIZE 64
#else
#define PORTAGPU_WARP_SIZE 32  // every NVIDIA GPU
#endif
#endif

// Largest block portagpu launches, and so the most warps a block holds; per-warp
// scratch arrays are sized with it. It never exceeds the warp width (1024/32 = 32,
// 1024/64 = 16), so one warp can combine all warps' results.
#define PORTAGPU_MAX_BLOCK_THREADS 1024
#define PORTAGPU_MAX_WARPS (PORTAGPU_MAX_BLOCK_THREADS / PORTAGPU_WARP_SIZE)

// Ballots are always 64-bit: a wave64 ballot does not fit in 32 bits.
typedef unsigned long long pg_ballot_t;

#if defined(PORTAGPU_HIP)
typedef unsigned long long pg_lane_mask_t;  // HIP masks are 64-bit at any wave size
#else
typedef unsigned int pg_lane_mask_t;        // CUDA *_sync masks are 32-bit
#endif

// All lanes of this warp: all-ones of the warp's width, whatever the mask type.
__device__ __forceinline__ pg_lane_mask_t pg_full_mask() {
    return (pg_lane_mask_t)(PORTAGPU_WARP_SIZE >= 64 ? ~0ull : ((1ull << PORTAGPU_WARP_SIZE) - 1ull));
}

__device__ __forceinline__ int pg_lane_id() { return (int)(threadIdx.x % PORTAGPU_WARP_SIZE); }
__device__ __forceinline__ int pg_warp_id() { return (int)(threadIdx.x / PORTAGPU_WARP_SIZE); }
__device__ __forceinline__ int pg_warps_in_block() {
    return (int)((blockDim.x + PORTAGPU_WARP_SIZE - 1) / PORTAGPU_WARP_SIZE);
}

// Lanes below this one, as a 64-bit mask (lane 63 included at wave64).
__device__ __forceinline__ pg_ballot_t pg_lanes_below() {
    return (1ull << pg_lane_id()) - 1ull;
}

// ROCm before 6.3 has no *_sync warp functions; the plain ones act on the whole
// wavefront, which is what every caller here wants (all lanes take part).
template <typename T>
__device__ __forceinline__ T pg_shfl_down(T value, unsigned int delta) {
#if defined(PORTAGPU_HIP)
    return __shfl_down(value, delta, PORTAGPU_WARP_SIZE);
#else
    return __shfl_down_sync(pg_full_mask(), value, delta, PORTAGPU_WARP_SIZE);
#endif
}

template <typename T>
__device__ __forceinline__ T pg_shfl_up(T value, unsigned int delta) {
#if defined(PORTAGPU_HIP)
    return __shfl_up(value, delta, PORTAGPU_WARP_SIZE);
#else
    return __shfl_up_sync(pg_full_mask(), value, delta, PORTAGPU_WARP_SIZE);
#endif
}

template <typename T>
__device__ __forceinline__ T pg_shfl(T value, int src_lane) {
#if defined(PORTAGPU_HIP)
    return __shfl(value, src_lane, PORTAGPU_WARP_SIZE);
#else
    return __shfl_sync(pg_full_mask(), value, src_lane, PORTAGPU_WARP_SIZE);
#endif
}

// Every lane must call it (uniform control flow); bit i is lane i's predicate.
__device__ __forceinline__ pg_ballot_t pg_ballot(bool predicate) {
#if defined(PORTAGPU_HIP)
    return (pg_ballot_t)__ballot(predicate);
#else
    return (pg_ballot_t)__ballot_sync(pg_full_mask(), predicate);
#endif
}

__device__ __forceinline__ int pg_popcount(pg_ballot_t bits) { return __popcll(bits); }
__device__ __forceinline__ int pg_first_lane(pg_ballot_t bits) { return __ffsll((long long)bits) - 1; }

// The lanes of this warp whose `value` equals this lane's (this lane included).
// Every lane must call it. NVIDIA has an instruction for it; HIP has none, so
// there each round peels off the lanes that share the first pending lane's value.
__device__ __forceinline__ pg_ballot_t pg_match_any(int value) {
#if defined(PORTAGPU_HIP)
    pg_ballot_t peers = 0;
    pg_ballot_t pending = pg_ballot(true);
    while (pending) {  // warp-uniform: every lane sees the same ballots
        const int leader_value = pg_shfl(value, pg_first_lane(pending));
        const pg_ballot_t group = pg_ballot(value == leader_value);
        if (value == leader_value) peers = group;
        pending &= ~group;
    }
    return peers;
#else
    return (pg_ballot_t)__match_any_sync(pg_full_mask(), value);
#endif
}

struct PgSum {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
// NaN wins, whichever side it is on (torch.max propagates NaN; fmaxf would drop it)
struct PgMax {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};

// Tree reduction over the warp with shuffles; every lane ends with the result.
template <typename T, typename Op>
__device__ __forceinline__ T pg_warp_reduce(T value, Op op) {
    for (int offset = PORTAGPU_WARP_SIZE / 2; offset > 0; offset /= 2) {
        value = op(value, pg_shfl_down(value, offset));
    }
    return pg_shfl(value, 0);
}

// Reduction over the block: warps reduce, then warp 0 reduces the warp results.
// Every thread must call it; every thread gets the result.
template <typename T, typename Op>
__device__ __forceinline__ T pg_block_reduce(T value, Op op, T identity) {
    __shared__ T warp_results[PORTAGPU_MAX_WARPS];
    __shared__ T block_result;
    value = pg_warp_reduce(value, op);
    if (pg_lane_id() == 0) warp_results[pg_warp_id()] = value;
    __syncthreads();
    if (pg_warp_id() == 0) {
        T mine = pg_lane_id() < pg_warps_in_block() ? warp_results[pg_lane_id()] : identity;
        mine = pg_warp_reduce(mine, op);
        if (pg_lane_id() == 0) block_result = mine;
    }
    __syncthreads();
    return block_result;
}

// Inclusive prefix sum across the warp (Hillis-Steele with shuffles).
template <typename T>
__device__ __forceinline__ T pg_warp_inclusive_scan(T value) {
    const int lane = pg_lane_id();
    for (int delta = 1; delta < PORTAGPU_WARP_SIZE; delta *= 2) {
        T other = pg_shfl_up(value, delta);
        if (lane >= delta) value += other;
    }
    return value;
}

#endif  // PORTAGPU_WARP_CUH
