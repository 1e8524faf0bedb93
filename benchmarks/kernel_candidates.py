"""Kernel bodies that kernels/_triton/ replaced (issue 15), kept as baselines
for benchmarks/kernel_sweep.py: one program per row for layer_norm and the
row reductions, the three-pass layer_norm for long rows, the softmax second
pass without L2 hints."""

import triton
import triton.language as tl


@triton.jit
def previous_layer_norm_kernel(
    x_ptr,
    weight_ptr,
    bias_ptr,
    out_ptr,
    cols,
    x_row_stride,
    out_row_stride,
    eps,
    HAS_WEIGHT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, 0) / cols
    centred = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, 0) / cols + eps)
    y = centred * rstd
    if HAS_WEIGHT:
        y = y * tl.load(weight_ptr + offsets, mask=mask).to(tl.float32)
    if HAS_BIAS:
        y = y + tl.load(bias_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + row * out_row_stride + offsets, y, mask=mask)


@triton.jit
def previous_layer_norm_looped_kernel(
    x_ptr,
    weight_ptr,
    bias_ptr,
    out_ptr,
    cols,
    x_row_stride,
    out_row_stride,
    eps,
    HAS_WEIGHT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        total += tl.load(x_row + offsets, mask=offsets < cols, other=0.0).to(tl.float32)
    mean = tl.sum(total, 0) / cols
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < cols
        centred = tl.where(
            mask, tl.load(x_row + offsets, mask=mask, other=0.0).to(tl.float32) - mean, 0.0
        )
        squares += centred * centred
    rstd = 1.0 / tl.sqrt(tl.sum(squares, 0) / cols + eps)
    out_row = out_ptr + row * out_row_stride
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < cols
        y = (tl.load(x_row + offsets, mask=mask, other=0.0).to(tl.float32) - mean) * rstd
        if HAS_WEIGHT:
            y = y * tl.load(weight_ptr + offsets, mask=mask).to(tl.float32)
        if HAS_BIAS:
            y = y + tl.load(bias_ptr + offsets, mask=mask).to(tl.float32)
        tl.store(out_row + offsets, y, mask=mask)


@triton.jit
def previous_softmax_looped_kernel(
    x_ptr, out_ptr, cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    running_max = tl.full([BLOCK], float("-inf"), tl.float32)
    running_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + offsets, mask=offsets < cols, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(running_max, x)
        safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)
        running_sum = running_sum * tl.exp(running_max - safe_max) + tl.exp(x - safe_max)
        running_max = new_max
    row_max = tl.max(running_max, 0)
    row_sum = tl.sum(running_sum * tl.exp(running_max - row_max), 0)
    out_row = out_ptr + row * out_row_stride
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < cols
        x = tl.load(x_row + offsets, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(out_row + offsets, tl.exp(x - row_max) / row_sum, mask=mask)


@triton.jit
def previous_reduce_rows_kernel(x_ptr, out_ptr, cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = x_ptr + row * row_stride
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(row_ptr + offsets, mask=offsets < cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, 0))
