"""Histogram of values into equal-width bins (torch.histc), counts as int64.

On GPUs the CUDA C kernel runs by default: where many lanes of a warp fall into
one bin, the warp aggregates them (match + popcount) before one atomic; bins are
privatised per block in dynamic shared memory when they fit. Triton has no ballots: each program counts
its elements with tl.histogram and adds them with one atomic per bin."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from portagpu.kernels import _cuda, _dispatch, _tuning
from portagpu.kernels._common import (
    TRITON_FLOATS,
    cdiv,
    dtype_name,
    next_power_of_2,
    persistent_grid,
)

import portagpu
from portagpu.device import device_of
from portagpu.errors import LaunchError

_PLANS = _dispatch.plan_cache()
_env_impl = _dispatch.env_impl


def histogram_reference(x: Any, bins: int = 100, range: tuple[float, float] | None = None) -> Any:  # noqa: A002
    import torch

    lo, hi = _range(x, range)
    return torch.histc(x.float(), bins=bins, min=lo, max=hi).to(torch.int64)


def histogram(x: Any, bins: int = 100, range: tuple[float, float] | None = None, *,  # noqa: A002
              impl: str | None = None) -> Any:
    """Counts of x's values in `bins` equal bins over `range` (default: x's min and max).
    Values outside the range are ignored; the top edge belongs to the last bin."""
    key = (x.shape, x.dtype, x.device, x.is_contiguous(), bins, impl, _env_impl())
    plan = _PLANS.get(key)
    if plan is None:
        if bins < 1:
            raise LaunchError(f"histogram: bins must be >= 1, got {bins}")
        plan = _dispatch.remember(_PLANS, key, _plan(x, bins, impl))
    return plan(x, range)


def _plan(x: Any, bins: int, impl: str | None) -> Callable[[Any, Any], Any]:
    """What every call with x's shape, dtype, device and layout and `bins` does."""
    import torch

    device = device_of(x)
    fits = None if dtype_name(x) in TRITON_FLOATS else "needs a float tensor"
    impls = ("triton", "cuda", "torch") if dtype_name(x) == "float32" else ("triton", "torch")
    chosen = _dispatch.choose("histogram", device, impl, impls=impls, fits=fits, empty=x.numel() == 0)
    if chosen == "torch":

        def reference(x: Any, range: Any) -> Any:  # noqa: A002
            _dispatch.record("torch")
            return histogram_reference(x, bins, range)

        return reference
    n = x.numel()
    config = _tuning.config("histogram", device.vendor, n)
    new_counts = functools.partial(torch.zeros, bins, dtype=torch.int32, device=x.device)
    int64, last = torch.int64, _dispatch._last
    if chosen == "triton":
        from portagpu.kernels._triton import histogram as kernels

        num_bins = next_power_of_2(bins + 1)  # + a spare bin for values outside the range
        if num_bins <= config["max_block_bins"]:
            programs = min(cdiv(n, config["BLOCK"]), persistent_grid(device, config, "programs_per_sm"))
            kernel, grid = kernels.histogram_blocks_kernel, (programs,)
            num_warps, meta = _dispatch.triton_meta(config, NUM_BINS=num_bins)
        else:
            kernel, grid = kernels.histogram_kernel, (cdiv(n, config["BLOCK"]),)
            num_warps, meta = _dispatch.triton_meta(config)
        launch = portagpu.launch

        def run_triton(x: Any, range: Any) -> Any:  # noqa: A002
            last.impl = "triton"
            lo, hi = _range(x, range)  # per call: the bounds are arguments, not constants
            counts = new_counts()
            # contiguous: the kernel reads n elements from the address on (no view needed)
            launch(kernel, grid, x.contiguous(), counts, n, bins, lo, hi, num_warps=num_warps, **meta)
            return counts.to(int64)

        return run_triton
    threads = int(config["threads"])
    blocks = min(cdiv(n, threads), persistent_grid(device, config, "blocks_per_sm"))
    # privatise the bins in shared memory when they fit the launch-time limit
    shared = bins * 4 if bins * 4 <= config["max_shared_bytes"] else 0

    def run_cuda(x: Any, range: Any) -> Any:  # noqa: A002
        last.impl = "cuda"
        lo, hi = _range(x, range)
        counts = new_counts()
        _cuda.launch("histogram.cu", "pg_histogram_f32", (blocks,), threads, x.contiguous(), counts, n,
                     bins, lo, hi, int(shared > 0), shared_mem=shared)
        return counts.to(int64)

    return run_cuda


def _range(x: Any, range: tuple[float, float] | None) -> tuple[float, float]:  # noqa: A002
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
        if not lo < hi:
            raise LaunchError(f"histogram: range must have min < max, got {range}")
        return lo, hi
    if x.numel() == 0:
        return 0.0, 0.0  # torch.histc of nothing: zeros
    lo, hi = (float(v) for v in x.aminmax())
    if not (math.isfinite(lo) and math.isfinite(hi)):  # a NaN or inf: torch.histc refuses too
        raise LaunchError(f"histogram: range of [{lo}, {hi}] is not finite; pass range=(min, max)")
    return (lo - 1.0, hi + 1.0) if lo == hi else (lo, hi)  # torch.histc's rule for one value
