"""Inclusive prefix sum along rows, reduce-then-scan:
1. block_totals_kernel: the sum of each BLOCK of each row;
2. the caller scans those totals (recursively, with this same code);
3. scan_kernel: scans each block in registers and adds the total of the blocks
   before it, reading the input twice and writing once, all in the ACC type.
Programs are numbered row-major over (row, block) in one grid axis."""

import triton
import triton.language as tl


@triton.jit
def block_totals_kernel(x_ptr, totals_ptr, cols, blocks_per_row, ACC: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    row = pid // blocks_per_row
    offsets = (pid % blocks_per_row) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offsets, mask=offsets < cols, other=0).to(ACC)
    tl.store(totals_ptr + pid, tl.sum(x, 0))


@triton.jit
def scan_kernel(x_ptr, out_ptr, inclusive_totals_ptr, cols, blocks_per_row,
                HAS_CARRY: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    row = pid // blocks_per_row
    block = pid % blocks_per_row
    offsets = block * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=0).to(ACC)
    y = tl.cumsum(x, 0)
    if HAS_CARRY:
        # inclusive total of the blocks before this one (0 for the first block)
        y += tl.load(inclusive_totals_ptr + pid - 1, mask=block > 0, other=0)
    tl.store(out_ptr + row * cols + offsets, y, mask=mask)
