"""Histogram of values into equal-width bins (torch.histc), counts as int64.

On GPUs the CUDA C kernel runs by default: where many lanes of a warp fall into
one bin, the warp aggregates them (match + popcount) before one atomic; bins are
privatised per block in dynamic shared memory when they fit. Triton has no ballots: each program counts
its elements with tl.histogram and adds them with one atomic per bin."""

from __future__ import annotations

import math
from typing import Any

from portagpu.kernels import _cuda, _dispatch, _tuning
from portagpu.kernels._common import (
    TRITON_FLOATS,
    cdiv,
    dtype_name,
    next_power_of_2,
    persistent_grid,
)

from portagpu.device import device_of
from portagpu.errors import LaunchError


def histogram_reference(x: Any, bins: int = 100, range: tuple[float, float] | None = None) -> Any:  # noqa: A002
    import torch

    lo, hi = _range(x, range)
    return torch.histc(x.float(), bins=bins, min=lo, max=hi).to(torch.int64)


def histogram(x: Any, bins: int = 100, range: tuple[float, float] | None = None, *,  # noqa: A002
              impl: str | None = None) -> Any:
    """Counts of x's values in `bins` equal bins over `range` (default: x's min and max).
    Values outside the range are ignored; the top edge belongs to the last bin."""
    import torch

    if bins < 1:
        raise LaunchError(f"histogram: bins must be >= 1, got {bins}")
    device = device_of(x)
    fits = None if dtype_name(x) in TRITON_FLOATS else "needs a float tensor"
    impls = ("triton", "cuda", "torch") if dtype_name(x) == "float32" else ("triton", "torch")
    chosen = _dispatch.choose("histogram", device, impl, impls=impls, fits=fits, empty=x.numel() == 0)
    if chosen == "torch":
        return histogram_reference(x, bins, range)
    lo, hi = _range(x, range)
    flat = x.contiguous().view(-1)
    n = flat.numel()
    counts = torch.zeros(bins, dtype=torch.int32, device=x.device)
    config = _tuning.config("histogram", device.vendor, n)
    if chosen == "triton":
        from portagpu.kernels._triton import histogram as kernels

        num_bins = next_power_of_2(bins + 1)  # + a spare bin for values outside the range
        if num_bins <= config["max_block_bins"]:
            programs = min(cdiv(n, config["BLOCK"]), persistent_grid(device, config, "programs_per_sm"))
            _dispatch.launch_triton(kernels.histogram_blocks_kernel, (programs,), flat, counts, n, bins,
                                    lo, hi, device=device, config=config, NUM_BINS=num_bins)
        else:
            _dispatch.launch_triton(kernels.histogram_kernel, (cdiv(n, config["BLOCK"]),), flat, counts, n,
                                    bins, lo, hi, device=device, config=config)
    else:
        threads = int(config["threads"])
        blocks = min(cdiv(n, threads), persistent_grid(device, config, "blocks_per_sm"))
        # privatise the bins in shared memory when they fit the launch-time limit
        shared = bins * 4 if bins * 4 <= config["max_shared_bytes"] else 0
        _cuda.launch("histogram.cu", "pg_histogram_f32", (blocks,), threads, flat, counts, n, bins, lo, hi,
                     int(shared > 0), shared_mem=shared)
    return counts.to(torch.int64)


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
