"""Histogram with one global atomic per element in range (Triton has no warp
ballots; the CUDA C kernel aggregates within the warp first)."""

import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, counts_ptr, n, bins, lo, hi, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    inside = mask & (x >= lo) & (x <= hi)
    # same arithmetic as torch.histc: (x - lo) * bins / (hi - lo); hi goes in the last bin
    index = tl.minimum(((x - lo) * bins / (hi - lo)).to(tl.int32), bins - 1)
    index = tl.where(inside, index, 0)
    tl.atomic_add(counts_ptr + index, tl.full([BLOCK], 1, tl.int32), mask=inside)
