"""Inclusive prefix sum along a dim (torch.cumsum), accumulated in fp32.

Long rows are split into blocks: block totals are scanned by the same code
(recursively) and added back, so any length works with bounded blocks."""

from __future__ import annotations

from typing import Any

from portagpu.kernels import _cuda, _dispatch, _tuning
from portagpu.kernels._common import (
    TRITON_FLOATS,
    as_rows,
    cdiv,
    check_out,
    dtype_name,
    next_power_of_2,
)

from portagpu.device import Device, device_of

_CUDA_MAX_ROWS = 65535  # gridDim.y carries the row


def cumsum_reference(x: Any, dim: int = -1) -> Any:
    import torch

    return torch.cumsum(x, dim=dim)


def cumsum(x: Any, dim: int = -1, *, out: Any = None, impl: str | None = None) -> Any:
    """Inclusive prefix sums of x along `dim`; the output has x's dtype."""
    device = device_of(x)
    fits = None if dtype_name(x) in TRITON_FLOATS else "needs a float tensor"
    rows_view, rows, cols = as_rows(x, dim) if x.ndim else (x.reshape(1), 1, 1)
    cuda_ok = dtype_name(x) == "float32" and rows <= _CUDA_MAX_ROWS
    impls = ("triton", "cuda", "torch") if cuda_ok else ("triton", "torch")
    chosen = _dispatch.choose("cumsum", device, impl, impls=impls, fits=fits, empty=x.numel() == 0)
    if chosen == "torch":
        result = cumsum_reference(x, dim)
        return result if out is None else check_out(out, result, "cumsum").copy_(result)
    out = check_out(out, x, "cumsum")
    moved = x.ndim > 1 and dim not in (-1, x.ndim - 1)
    dest = rows_view.new_empty(rows_view.shape) if moved else out
    run = _scan_triton if chosen == "triton" else _scan_cuda
    run(rows_view.view(rows, cols), dest.view(rows, cols), device)
    if moved:
        out.copy_(dest.movedim(-1, dim))
    return out


def _scan_triton(x: Any, out: Any, device: Device) -> None:
    import torch
    import triton.language as tl
    from portagpu.kernels._triton.scan import block_totals_kernel, scan_kernel

    rows, cols = x.shape
    config = _tuning.config("cumsum", device.vendor, cols)
    block = min(int(config["BLOCK"]), max(16, next_power_of_2(cols)))
    blocks = cdiv(cols, block)
    grid = (rows * blocks,)
    if blocks == 1:
        _dispatch.launch_triton(scan_kernel, grid, x, out, x, cols, blocks, device=device, config=config,
                                HAS_CARRY=False, ACC=tl.float32, BLOCK=block)
        return
    totals = torch.empty(rows, blocks, dtype=torch.float32, device=x.device)
    _dispatch.launch_triton(block_totals_kernel, grid, x, totals, cols, blocks, device=device,
                            config=config, ACC=tl.float32, BLOCK=block)
    inclusive = torch.empty_like(totals)
    _scan_triton(totals, inclusive, device)
    _dispatch.launch_triton(scan_kernel, grid, x, out, inclusive, cols, blocks, device=device,
                            config=config, HAS_CARRY=True, ACC=tl.float32, BLOCK=block)


def _scan_cuda(x: Any, out: Any, device: Device) -> None:
    import torch

    rows, cols = x.shape
    config = _tuning.config("cumsum", device.vendor, cols)
    threads = int(config["threads"])
    blocks = cdiv(cols, threads)
    totals = torch.empty(rows, blocks, dtype=torch.float32, device=x.device)
    _cuda.launch("scan.cu", "pg_scan_f32", (blocks, rows), threads, x, out, totals, cols)
    if blocks > 1:
        inclusive = torch.empty_like(totals)
        _scan_cuda(totals, inclusive, device)
        _cuda.launch("scan.cu", "pg_scan_add_f32", (blocks, rows), threads, out, inclusive, cols)
