"""Inclusive prefix sum along a dim (torch.cumsum), accumulated in fp32.

Long rows are split into blocks: block totals are scanned by the same code
(recursively) and added back, so any length works with bounded blocks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from portagpu.kernels import _cuda, _dispatch, _tuning
from portagpu.kernels._common import (
    TRITON_FLOATS,
    as_rows,
    cdiv,
    check_out,
    dtype_name,
    empty_maker,
    next_power_of_2,
)

from portagpu.device import Device, device_of
from portagpu.runtime.dispatch import prepare_launch

_CUDA_MAX_ROWS = 65535  # gridDim.y carries the row


def cumsum_reference(x: Any, dim: int = -1) -> Any:
    import torch

    return torch.cumsum(x, dim=dim)


def _plan(x: Any, dim: int, impl: str | None) -> Callable[[Any, Any], Any]:
    """What every call with x's shape, dtype, device and layout does."""
    device = device_of(x)
    fits = None if dtype_name(x) in TRITON_FLOATS else "needs a float tensor"
    moved_view = x.movedim(dim, -1) if x.ndim else x.reshape(1)  # a view: raises as torch does for a bad dim
    cols = moved_view.shape[-1]
    rows = x.numel() // cols if cols else 0
    cuda_ok = dtype_name(x) == "float32" and rows <= _CUDA_MAX_ROWS
    impls = ("triton", "cuda", "torch") if cuda_ok else ("triton", "torch")
    chosen = _dispatch.choose("cumsum", device, impl, impls=impls, fits=fits, empty=x.numel() == 0)
    if chosen == "torch":

        def reference(x: Any, out: Any) -> Any:
            _dispatch.record("torch")
            result = cumsum_reference(x, dim)
            return result if out is None else check_out(out, result, "cumsum").copy_(result)

        return reference
    scan = (_scan_triton if chosen == "triton" else _scan_cuda)(rows, cols, x.dtype, x.device, device)
    moved = x.ndim > 1 and dim not in (-1, x.ndim - 1)
    last = _dispatch._last

    def run(x: Any, out: Any) -> Any:
        last.impl = chosen
        out = check_out(out, x, "cumsum")
        rows_view = as_rows(x, dim)[0] if x.ndim else x
        dest = rows_view.new_empty(rows_view.shape) if moved else out
        scan(rows_view, dest)  # contiguous rows: the kernels read addresses, not shapes
        if moved:
            out.copy_(dest.movedim(-1, dim))
        return out

    return run


def _scan_triton(rows: int, cols: int, dtype: Any, where: Any, device: Device) -> Callable[[Any, Any], None]:
    """scan(x, out) for contiguous tensors holding (rows, cols) of `dtype` on
    torch device `where`: the launches and allocations of every level worked
    out once."""
    import torch
    import triton.language as tl
    from portagpu.kernels._triton.scan import block_totals_kernel, scan_kernel

    config = _tuning.config("cumsum", device.vendor, cols)
    block = min(int(config["BLOCK"]), max(16, next_power_of_2(cols)))
    blocks = cdiv(cols, block)
    grid = (rows * blocks,)
    options = dict(ACC=tl.float32, BLOCK=block)
    # a plan is per dtype and device, and allocates the totals: trusted launches
    if blocks == 1:
        single = prepare_launch(scan_kernel, grid, (None, None, None, cols, blocks), (0, 1, 2),
                                *_dispatch.triton_meta(config, HAS_CARRY=False, **options), device, trusted=True)

        def scan_one_block(x: Any, out: Any) -> None:
            single(x, out, x)  # the carry pointer is not read

        return scan_one_block
    totals_pass = prepare_launch(block_totals_kernel, grid, (None, None, cols, blocks), (0, 1),
                                 *_dispatch.triton_meta(config, **options), device, trusted=True)
    carry_pass = prepare_launch(scan_kernel, grid, (None, None, None, cols, blocks), (0, 1, 2),
                                *_dispatch.triton_meta(config, HAS_CARRY=True, **options), device, trusted=True)
    new_totals = empty_maker((rows, blocks), torch.float32, where)
    scan_totals = _scan_triton(rows, blocks, torch.float32, where, device)

    def scan_blocks(x: Any, out: Any) -> None:
        totals, inclusive = new_totals(), new_totals()
        totals_pass(x, totals)
        scan_totals(totals, inclusive)
        carry_pass(x, out, inclusive)

    return scan_blocks


def _scan_cuda(rows: int, cols: int, dtype: Any, where: Any, device: Device) -> Callable[[Any, Any], None]:
    """As _scan_triton, with the CUDA C kernels (float32)."""
    import torch

    config = _tuning.config("cumsum", device.vendor, cols)
    threads = int(config["threads"])
    blocks = cdiv(cols, threads)
    new_totals = empty_maker((rows, blocks), torch.float32, where)
    scan_totals = _scan_cuda(rows, blocks, torch.float32, where, device) if blocks > 1 else None

    def scan(x: Any, out: Any) -> None:
        totals = new_totals()
        _cuda.launch("scan.cu", "pg_scan_f32", (blocks, rows), threads, x, out, totals, cols)
        if scan_totals is not None:
            inclusive = new_totals()
            scan_totals(totals, inclusive)
            _cuda.launch("scan.cu", "pg_scan_add_f32", (blocks, rows), threads, out, inclusive, cols)

    return scan


cumsum = _dispatch.planned_along_dim("cumsum", _plan, "Inclusive prefix sums of x along `dim`; the output has x's dtype.")
