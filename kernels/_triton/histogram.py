"""Histograms. Triton has no warp votes, so the per-block privatisation is
tl.histogram over each program's elements (summed over a persistent loop),
then one atomic per bin per program. Bins beyond what a block histogram holds
in registers take one global atomic per element."""

import triton
import triton.language as tl


@triton.jit
def _bin_index(x, lo, hi, bins):
    # same arithmetic as torch.histc: (x - lo) * bins / (hi - lo); hi goes in the last bin
    return tl.minimum(((x - lo) * bins / (hi - lo)).to(tl.int32), bins - 1)


@triton.jit
def histogram_blocks_kernel(x_ptr, counts_ptr, n, bins, lo, hi, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    # NUM_BINS is a power of two > bins: values outside the range count in the spare
    # top bin, which is never added (this Triton's tl.histogram may lack mask=)
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    total = tl.zeros([NUM_BINS], tl.int32)
    for start in range(pid * BLOCK, n, step):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        inside = mask & (x >= lo) & (x <= hi)
        total += tl.histogram(tl.where(inside, _bin_index(x, lo, hi, bins), NUM_BINS - 1), NUM_BINS)
    bin_ids = tl.arange(0, NUM_BINS)
    tl.atomic_add(counts_ptr + bin_ids, total, mask=(bin_ids < bins) & (total > 0))


@triton.jit
def histogram_kernel(x_ptr, counts_ptr, n, bins, lo, hi, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    inside = mask & (x >= lo) & (x <= hi)
    index = tl.where(inside, _bin_index(x, lo, hi, bins), 0)
    tl.atomic_add(counts_ptr + index, tl.full([BLOCK], 1, tl.int32), mask=inside)
