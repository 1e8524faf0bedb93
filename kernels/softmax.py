"""Row softmax (torch.softmax), numerically stable, computed in fp32."""

from __future__ import annotations

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


def softmax_reference(x: Any, dim: int = -1) -> Any:
    import torch

    return torch.softmax(x, dim=dim)


def softmax(x: Any, dim: int = -1, *, out: Any = None, impl: str | None = None) -> Any:
    """softmax along `dim`; the output has x's dtype."""
    device = device_of(x)
    fits = None if dtype_name(x) in TRITON_FLOATS else "needs a float tensor"
    if _dispatch.choose("softmax", device, impl, fits=fits, empty=x.numel() == 0) == "torch":
        result = softmax_reference(x, dim)
        return result if out is None else check_out(out, result, "softmax").copy_(result)
    out = check_out(out, x, "softmax")
    rows_view, rows, cols = as_rows(x, dim)
    moved = dim not in (-1, x.ndim - 1)
    dest = rows_view.new_empty(rows_view.shape) if moved else out
    config = _tuning.config("softmax", device.vendor, cols)
    from portagpu.kernels._triton import softmax as kernels

    if cols <= config["max_fused_cols"]:
        per_program = int(config.get("ROWS", 1))
        _dispatch.launch_triton(kernels.softmax_kernel, (cdiv(rows, per_program),), rows_view, dest, rows,
                                cols, cols, cols, device=device, config=config, ROWS=per_program,
                                BLOCK=max(16, next_power_of_2(cols)))
    else:
        meta = {k: v for k, v in config.items() if k != "ROWS"}
        _dispatch.launch_triton(kernels.softmax_looped_kernel, (rows,), rows_view, dest, cols, cols, cols,
                                device=device, config=meta)
    if moved:
        out.copy_(dest.movedim(-1, dim))
    return out
