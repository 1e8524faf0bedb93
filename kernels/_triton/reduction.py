"""Sum and max: a persistent pass that leaves one partial per program (run again
with one program over the partials), and ROWS rows per program for dim=-1.

Max follows torch: a NaN anywhere makes the result NaN, and along a dim the
index is the first NaN's (else the first maximum's). tl.maximum and tl.max
drop NaN by default, so the comparisons here carry it explicitly."""

import triton
import triton.language as tl


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


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
            acc = _max_nan(acc, tl.load(x_ptr + offsets, mask=mask, other=float("-inf")).to(tl.float32))
        else:
            acc += tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if IS_MAX:
        result = tl.reduce(acc, 0, _max_nan)
    else:
        result = tl.sum(acc, 0)
    tl.store(partials_ptr + pid, result)


@triton.jit
def reduce_rows_kernel(x_ptr, out_ptr, index_ptr, rows, cols, row_stride,
                       IS_MAX: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    # ROWS rows per program (short rows: a program per row would do too little),
    # BLOCK columns at a time
    row_ids = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    row_mask = row_ids < rows
    row_ptr = x_ptr + row_ids[:, None] * row_stride
    if IS_MAX:
        acc = tl.full([ROWS, BLOCK], float("-inf"), tl.float32)
        best = tl.zeros([ROWS, BLOCK], tl.int64)
    else:
        acc = tl.zeros([ROWS, BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = row_mask[:, None] & (offsets[None, :] < cols)
        if IS_MAX:
            value = tl.load(row_ptr + offsets[None, :], mask=mask, other=float("-inf")).to(tl.float32)
            # strict, so an earlier chunk keeps ties; a NaN beats any number, not an earlier NaN
            better = (value > acc) | ((value != value) & (acc == acc))
            best = tl.where(better, offsets.to(tl.int64)[None, :], best)
            acc = tl.where(better, value, acc)
        else:
            acc += tl.load(row_ptr + offsets[None, :], mask=mask, other=0.0).to(tl.float32)
    if IS_MAX:
        result = tl.reduce(acc, 1, _max_nan)
        # first occurrence of the maximum (of a NaN, when the row has one), like torch
        nan_lanes = acc != acc
        has_nan = tl.max(nan_lanes.to(tl.int32), 1) > 0
        winner = tl.where(has_nan[:, None], nan_lanes, acc == result[:, None])
        tl.store(index_ptr + row_ids, tl.min(tl.where(winner, best, cols), 1), mask=row_mask)
    else:
        result = tl.sum(acc, 1)
    tl.store(out_ptr + row_ids, result, mask=row_mask)
