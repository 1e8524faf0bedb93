from numba import cuda  # expect: PG303

LANES_PER_WARP = 32  # expect: PG309
TILE = 32


@cuda.jit(device=True)
def warp_max(v):
    offset = LANES_PER_WARP // 2
    while offset:
        v = max(v, cuda.shfl_xor_sync(0xFFFFFFFF, v, offset))  # expect: PG312
        offset //= 2
    return v


@cuda.jit
def rows(a):
    i = cuda.threadIdx.x
    a[i // TILE, i % TILE] = warp_max(a[i // TILE, i % TILE])
