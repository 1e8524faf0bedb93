"""Sum and max: a persistent pass that leaves one partial per program (run again
with one program over the partials), and one program per row for dim=-1."""

import triton
import triton.language as tl


@triton.jit
def reduce_partials_kernel(x_ptr, partials_ptr, n, IS_MAX: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    if IS_MAX:
        acc = tl.full([BLOCK], float("-inf"), tl.float32)
    else:
        acc = tl.zeros([BLOCK], tl.float32)
    for start in range(pid * BLOCK, n, step):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n
        if IS_MAX:
            acc = tl.maximum(acc, tl.load(x_ptr + offsets, mask=mask, other=float("-inf")).to(tl.float32))
        else:
            acc += tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if IS_MAX:
        result = tl.max(acc, 0)
    else:
        result = tl.sum(acc, 0)
    tl.store(partials_ptr + pid, result)


@triton.jit
def reduce_rows_kernel(x_ptr, out_ptr, index_ptr, cols, row_stride,
                       IS_MAX: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = x_ptr + row * row_stride
    if IS_MAX:
        acc = tl.full([BLOCK], float("-inf"), tl.float32)
        best = tl.zeros([BLOCK], tl.int64)
    else:
        acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < cols
        if IS_MAX:
            value = tl.load(row_ptr + offsets, mask=mask, other=float("-inf")).to(tl.float32)
            better = value > acc  # strict: an earlier chunk keeps ties
            best = tl.where(better, offsets.to(tl.int64), best)
            acc = tl.where(better, value, acc)
        else:
            acc += tl.load(row_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if IS_MAX:
        result = tl.max(acc, 0)
        # first occurrence of the maximum, like torch on CPU
        tl.store(index_ptr + row, tl.min(tl.where(acc == result, best, cols), 0))
    else:
        result = tl.sum(acc, 0)
    tl.store(out_ptr + row, result)
