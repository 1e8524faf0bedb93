"""Reductions: sum and max over a whole tensor or along one dim (torch.sum / torch.max).

Whole tensors take two passes: a persistent grid leaves one fp32 partial per
program (or CUDA C block), then one program reduces the partials. Along a dim,
one program (block) reduces each row."""

from __future__ import annotations

import builtins  # this module defines sum and max
from typing import Any

from portagpu.kernels import _cuda, _dispatch, _tuning
from portagpu.kernels._common import TRITON_FLOATS, as_rows, cdiv, dtype_name, persistent_grid

from portagpu.device import Device, device_of


def sum_reference(x: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    import torch

    return torch.sum(x) if dim is None else torch.sum(x, dim=dim, keepdim=keepdim)


def max_reference(x: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    import torch

    return torch.max(x) if dim is None else torch.max(x, dim=dim, keepdim=keepdim)


def sum(x: Any, dim: int | None = None, keepdim: bool = False, *, impl: str | None = None) -> Any:  # noqa: A001
    """torch.sum(x) or torch.sum(x, dim, keepdim); accumulates in fp32."""
    return _reduce("sum", x, dim, keepdim, impl)


def max(x: Any, dim: int | None = None, keepdim: bool = False, *, impl: str | None = None) -> Any:  # noqa: A001
    """torch.max(x), or (values, indices) along `dim` like torch.max(x, dim, keepdim)."""
    return _reduce("max", x, dim, keepdim, impl)


def _reduce(op: str, x: Any, dim: int | None, keepdim: bool, impl: str | None) -> Any:
    device = device_of(x)
    kernel = "reduce" if dim is None else "reduce_rows"
    fits = None if dtype_name(x) in TRITON_FLOATS else "needs a float tensor"
    # CUDA C: float32; its row max has no indices
    cuda_ok = dtype_name(x) == "float32" and not (op == "max" and dim is not None)
    impls = ("triton", "cuda", "torch") if cuda_ok else ("triton", "torch")
    chosen = _dispatch.choose(kernel, device, impl, impls=impls, fits=fits, empty=x.numel() == 0)
    reference = sum_reference if op == "sum" else max_reference
    if chosen == "torch":
        return reference(x, dim, keepdim)
    if dim is None:
        flat = x.contiguous().view(-1)
        config = _tuning.config("reduce", device.vendor, flat.numel())
        run = _vector_triton if chosen == "triton" else _vector_cuda
        result = run(op, flat, device, config)
        return result.view([1] * x.ndim) if keepdim else result.view(())
    rows_view, rows, cols = as_rows(x, dim)
    config = _tuning.config("reduce_rows", device.vendor, cols)
    run = _rows_triton if chosen == "triton" else _rows_cuda
    values, indices = run(op, rows_view.view(rows, cols), device, config)
    shape = list(rows_view.shape[:-1])
    values, indices = values.view(shape), (None if indices is None else indices.view(shape))
    if keepdim:
        values = values.unsqueeze(dim)
        indices = None if indices is None else indices.unsqueeze(dim)
    if op == "sum":
        return values
    import torch

    return torch.return_types.max((values, indices))


def _vector_triton(op: str, flat: Any, device: Device, config: dict[str, Any]) -> Any:
    import torch
    from portagpu.kernels._triton.reduction import reduce_partials_kernel

    n = flat.numel()
    programs = min(cdiv(n, config["BLOCK"]), persistent_grid(device, config, "programs_per_sm"))
    partials = torch.empty(programs, dtype=torch.float32, device=flat.device)
    is_max = op == "max"
    _dispatch.launch_triton(reduce_partials_kernel, (programs,), flat, partials, n,
                            device=device, config=config, IS_MAX=is_max)
    out = torch.empty(1, dtype=flat.dtype, device=flat.device)
    _dispatch.launch_triton(reduce_partials_kernel, (1,), partials, out, programs, device=device,
                            config=config, IS_MAX=is_max, BLOCK=min(config["BLOCK"], 1024))
    return out


def _vector_cuda(op: str, flat: Any, device: Device, config: dict[str, Any]) -> Any:
    import torch

    n, threads = flat.numel(), int(config["threads"])
    blocks = min(cdiv(n, threads), persistent_grid(device, config, "blocks_per_sm"))
    partials = torch.empty(blocks, dtype=torch.float32, device=flat.device)
    name = f"pg_{op}_f32"
    _cuda.launch("reduce.cu", name, (blocks,), threads, flat, partials, n)
    out = torch.empty(1, dtype=torch.float32, device=flat.device)
    _cuda.launch("reduce.cu", name, (1,), 1024, partials, out, blocks)
    return out


def _rows_triton(op: str, rows_2d: Any, device: Device, config: dict[str, Any]) -> tuple[Any, Any]:
    import torch
    from portagpu.kernels._triton.reduction import reduce_rows_kernel

    rows, cols = rows_2d.shape
    values = torch.empty(rows, dtype=rows_2d.dtype, device=rows_2d.device)
    indices = torch.empty(rows, dtype=torch.int64, device=rows_2d.device) if op == "max" else None
    block = _block_for(cols, config["BLOCK"])
    # a sum writes no indices; a distinct placeholder keeps the bf16 widening of
    # `values` from being copied back twice
    index_arg = indices if indices is not None else torch.empty(1, dtype=torch.int64, device=values.device)
    _dispatch.launch_triton(reduce_rows_kernel, (rows,), rows_2d, values, index_arg, cols, rows_2d.stride(0),
                            device=device, config=config, IS_MAX=op == "max", BLOCK=block)
    return values, indices


def _rows_cuda(op: str, rows_2d: Any, device: Device, config: dict[str, Any]) -> tuple[Any, Any]:
    import torch

    rows, cols = rows_2d.shape
    values = torch.empty(rows, dtype=torch.float32, device=rows_2d.device)
    _cuda.launch("reduce.cu", f"pg_row_{op}_f32", (rows,), int(config["threads"]),
                 rows_2d, values, cols)
    return values, None


def _block_for(cols: int, limit: int) -> int:
    """The smallest power of two covering the row, at most `limit` (then the kernel loops)."""
    from portagpu.kernels._common import next_power_of_2

    return builtins.max(16, next_power_of_2(cols)) if cols < limit else limit
