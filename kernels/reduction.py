"""Reductions: sum and max over a whole tensor or along one dim (torch.sum / torch.max).

Whole tensors take two passes: a persistent grid leaves one fp32 partial per
program (or CUDA C block), then one program reduces the partials. Along a dim,
a program reduces ROWS rows (several when rows are short), a CUDA C block one."""

from __future__ import annotations

import builtins  # this module defines sum and max
from collections.abc import Callable
from typing import Any

from portagpu.kernels import _cuda, _dispatch, _tuning
from portagpu.kernels._common import (
    TRITON_FLOATS,
    as_rows,
    cdiv,
    dtype_name,
    empty_maker,
    next_power_of_2,
    persistent_grid,
)

from portagpu.device import Device, device_of
from portagpu.runtime.dispatch import prepare_launch


def sum_reference(x: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    import torch

    return torch.sum(x) if dim is None else torch.sum(x, dim=dim, keepdim=keepdim)


def max_reference(x: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    import torch

    return torch.max(x) if dim is None else torch.max(x, dim=dim, keepdim=keepdim)


def _reduction(op: str, doc: str) -> Callable[..., Any]:
    """The public function of a reduction (sum, max): a plan per x's shape,
    dtype, device and layout, dim, keepdim, impl and the environment variable;
    the last call's plan is found by comparing keys (see _dispatch.last_plan)."""
    plans, last = _dispatch.plan_cache(), _dispatch.last_plan()
    env = _dispatch.env_impl

    def reduce(x: Any, dim: int | None = None, keepdim: bool = False, *, impl: str | None = None) -> Any:
        key = (x.shape, x.dtype, x.device, x.is_contiguous(), dim, keepdim, impl, env())
        hot = last[0]
        if key == hot[0]:
            return hot[1](x)
        plan = plans.get(key)
        if plan is None:
            plan = _dispatch.remember(plans, key, _plan(op, x, dim, keepdim, impl))
        last[0] = (key, plan)
        return plan(x)

    reduce.__name__ = reduce.__qualname__ = op
    reduce.__doc__ = doc
    reduce.plans = plans  # type: ignore[attr-defined]  # for inspection (benchmarks/host_profile.py)
    return reduce


sum = _reduction("sum", "torch.sum(x) or torch.sum(x, dim, keepdim); accumulates in fp32.")  # noqa: A001
max = _reduction(  # noqa: A001
    "max", "torch.max(x), or (values, indices) along `dim` like torch.max(x, dim, keepdim).")


def _plan(op: str, x: Any, dim: int | None, keepdim: bool, impl: str | None) -> Callable[[Any], Any]:
    """What every call with x's shape, dtype, device and layout does."""
    device = device_of(x)
    kernel = "reduce" if dim is None else "reduce_rows"
    fits = None if dtype_name(x) in TRITON_FLOATS else "needs a float tensor"
    # CUDA C: float32; its row max has no indices
    cuda_ok = dtype_name(x) == "float32" and not (op == "max" and dim is not None)
    impls = ("triton", "cuda", "torch") if cuda_ok else ("triton", "torch")
    chosen = _dispatch.choose(kernel, device, impl, impls=impls, fits=fits, empty=x.numel() == 0)
    if chosen == "torch":
        reference = sum_reference if op == "sum" else max_reference

        def run_reference(x: Any) -> Any:
            _dispatch.record("torch")
            return reference(x, dim, keepdim)

        return run_reference
    if dim is None:
        config = _tuning.config("reduce", device.vendor, x.numel())
        make = _vector_triton if chosen == "triton" else _vector_cuda
        return make(op, x, device, config, (1,) * x.ndim if keepdim else ())
    ndim = builtins.max(x.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    d = dim % x.ndim if x.ndim else 0
    cols = x.shape[d] if x.ndim else 1
    rows = x.numel() // cols
    shape = tuple(1 if i == d else n for i, n in enumerate(x.shape)) if keepdim else x.shape[:d] + x.shape[d + 1:]
    config = _tuning.config("reduce_rows", device.vendor, cols)
    make = _rows_triton if chosen == "triton" else _rows_cuda
    # x -> x as contiguous rows along d; None: x already is
    rows_of = None if x.is_contiguous() and d == x.ndim - 1 else (lambda x: as_rows(x, d)[0])
    return make(op, x, device, rows, cols, shape, rows_of, config)


def _vector_triton(op: str, x: Any, device: Device, config: dict[str, Any], shape: tuple) -> Callable:
    import torch
    from portagpu.kernels._triton.reduction import reduce_partials_kernel

    n = x.numel()
    programs = min(cdiv(n, config["BLOCK"]), persistent_grid(device, config, "programs_per_sm"))
    is_max = op == "max"
    # a plan is per dtype and device, and allocates the outputs: trusted launches
    partial_pass = prepare_launch(reduce_partials_kernel, (programs,), (None, None, n), (0, 1),
                                  *_dispatch.triton_meta(config, IS_MAX=is_max), device, trusted=True)
    last_pass = prepare_launch(reduce_partials_kernel, (1,), (None, None, programs), (0, 1),
                               *_dispatch.triton_meta(config, IS_MAX=is_max, BLOCK=min(config["BLOCK"], 1024)), device,
                               trusted=True)
    last = _dispatch._last
    new_partials, new_out = empty_maker((programs,), torch.float32, x.device), empty_maker(shape, x.dtype, x.device)

    def run(x: Any) -> Any:
        last.impl = "triton"
        partials = new_partials()
        partial_pass(x.contiguous(), partials)  # the kernel reads n elements from the start
        out = new_out()
        last_pass(partials, out)
        return out

    return run


def _vector_cuda(op: str, x: Any, device: Device, config: dict[str, Any], shape: tuple) -> Callable:
    import torch

    n, threads = x.numel(), int(config["threads"])
    blocks = min(cdiv(n, threads), persistent_grid(device, config, "blocks_per_sm"))
    name = f"pg_{op}_f32"
    new_partials = empty_maker((blocks,), torch.float32, x.device)
    new_out = empty_maker(shape, torch.float32, x.device)

    def run(x: Any) -> Any:
        _dispatch.record("cuda")
        partials = new_partials()
        _cuda.launch("reduce.cu", name, (blocks,), threads, x.contiguous(), partials, n)
        out = new_out()
        _cuda.launch("reduce.cu", name, (1,), 1024, partials, out, blocks)
        return out

    return run


def _rows_triton(op: str, x: Any, device: Device, rows: int, cols: int, shape: tuple, rows_of: Callable | None,
                 config: dict[str, Any]) -> Callable:
    import torch
    from portagpu.kernels._triton.reduction import reduce_rows_kernel

    per_program = int(config.get("ROWS", 1))
    grid, options = (cdiv(rows, per_program),), _dispatch.triton_meta(
        config, IS_MAX=op == "max", ROWS=per_program, BLOCK=_block_for(cols, config["BLOCK"]))
    last = _dispatch._last
    new_values = empty_maker(shape, x.dtype, x.device)
    # a plan is per dtype and device, and allocates the outputs: trusted launches
    if op == "sum":
        # a sum writes no indices: a placeholder this plan owns (distinct from the
        # values, whose bf16 widening in the interpreter is copied back once)
        placeholder = torch.empty(1, dtype=torch.int64, device=x.device)
        go = prepare_launch(reduce_rows_kernel, grid, (None, None, placeholder, rows, cols, cols), (0, 1),
                            *options, device, trusted=True)

        def run_sum(x: Any) -> Any:
            last.impl = "triton"
            values = new_values()
            go(x if rows_of is None else rows_of(x), values)
            return values

        return run_sum
    result = torch.return_types.max
    new_indices = empty_maker(shape, torch.int64, x.device)
    go = prepare_launch(reduce_rows_kernel, grid, (None, None, None, rows, cols, cols), (0, 1, 2), *options, device,
                        trusted=True)

    def run_max(x: Any) -> Any:
        last.impl = "triton"
        values, indices = new_values(), new_indices()
        go(x if rows_of is None else rows_of(x), values, indices)
        return result((values, indices))

    return run_max


def _rows_cuda(op: str, x: Any, device: Device, rows: int, cols: int, shape: tuple, rows_of: Callable | None,
               config: dict[str, Any]) -> Callable:
    import torch

    threads, name = int(config["threads"]), f"pg_row_{op}_f32"
    new_values = empty_maker(shape, torch.float32, x.device)

    def run(x: Any) -> Any:
        _dispatch.record("cuda")
        values = new_values()
        _cuda.launch("reduce.cu", name, (rows,), threads, x if rows_of is None else rows_of(x), values, cols)
        return values

    return run


def _block_for(cols: int, limit: int) -> int:
    """The smallest power of two covering the row, at most `limit` (then the kernel loops)."""
    return builtins.max(16, next_power_of_2(cols)) if cols < limit else limit
