"""Row softmax (torch.softmax), numerically stable, computed in fp32."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from portagpu.kernels import _dispatch, _tuning
from portagpu.kernels._common import (
    TRITON_FLOATS,
    as_rows,
    cdiv,
    check_out,
    dtype_name,
    next_power_of_2,
)

from portagpu.device import device_of
from portagpu.runtime.dispatch import prepare_launch


def softmax_reference(x: Any, dim: int = -1) -> Any:
    import torch

    return torch.softmax(x, dim=dim)


def _plan(x: Any, dim: int, impl: str | None) -> Callable[[Any, Any], Any]:
    """What every call with x's shape, dtype, device and layout does."""
    device = device_of(x)
    fits = None if dtype_name(x) in TRITON_FLOATS else "needs a float tensor"
    if _dispatch.choose("softmax", device, impl, fits=fits, empty=x.numel() == 0) == "torch":

        def reference(x: Any, out: Any) -> Any:
            _dispatch.record("torch")
            result = softmax_reference(x, dim)
            return result if out is None else check_out(out, result, "softmax").copy_(result)

        return reference
    from portagpu.kernels._triton import softmax as kernels

    cols = x.shape[dim] if x.ndim else 1
    rows = x.numel() // cols
    config = _tuning.config("softmax", device.vendor, cols)
    if cols <= config["max_fused_cols"]:
        per_program = int(config.get("ROWS", 1))
        kernel, grid, tail = kernels.softmax_kernel, (cdiv(rows, per_program),), (rows, cols, cols, cols)
        num_warps, meta = _dispatch.triton_meta(config, ROWS=per_program, BLOCK=max(16, next_power_of_2(cols)))
    else:
        kernel, grid, tail = kernels.softmax_looped_kernel, (rows,), (cols, cols, cols)
        num_warps, meta = _dispatch.triton_meta({k: v for k, v in config.items() if k != "ROWS"})
    import torch

    # a plan is per dtype and device; outputs are its own or checked alike: trusted
    go = prepare_launch(kernel, grid, (None, None, *tail), (0, 1), num_warps, meta, device, trusted=True)
    empty_like, last = torch.empty_like, _dispatch._last
    moved = dim not in (-1, x.ndim - 1)
    direct = x.is_contiguous() and not moved  # x is its own rows: nothing to copy in or out

    def run(x: Any, out: Any) -> Any:
        last.impl = "triton"
        if direct:
            out = empty_like(x) if out is None else check_out(out, x, "softmax")
            go(x, out)
            return out
        out = check_out(out, x, "softmax")
        rows_view = as_rows(x, dim)[0]
        dest = rows_view.new_empty(rows_view.shape) if moved else out
        go(rows_view, dest)
        if moved:
            out.copy_(dest.movedim(-1, dim))
        return out

    return run


softmax = _dispatch.planned_along_dim("softmax", _plan, "softmax along `dim`; the output has x's dtype.")
