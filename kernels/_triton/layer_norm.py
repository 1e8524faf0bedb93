"""LayerNorm forward over the last `cols` elements of each row, in fp32.

layer_norm_kernel holds the row in registers and centres before squaring (no
catastrophic cancellation); layer_norm_looped_kernel makes three passes (mean,
variance about the mean, normalise) for rows too long for registers."""

import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, weight_ptr, bias_ptr, out_ptr, cols, x_row_stride, out_row_stride, eps,
                      HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
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
def layer_norm_looped_kernel(x_ptr, weight_ptr, bias_ptr, out_ptr, cols, x_row_stride, out_row_stride,
                             eps, HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
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
        centred = tl.where(mask, tl.load(x_row + offsets, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
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
