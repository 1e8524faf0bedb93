"""Elementwise kernels: add (axpy), memory-bound."""

from __future__ import annotations

from typing import Any

from portagpu.kernels import _dispatch, _tuning
from portagpu.kernels._common import TRITON_FLOATS, cdiv, check_out, dtype_name

from portagpu.device import device_of


def add_reference(x: Any, y: Any, *, alpha: float = 1.0) -> Any:
    import torch

    return torch.add(x, y, alpha=alpha)


def add(x: Any, y: Any, *, alpha: float = 1.0, out: Any = None, impl: str | None = None) -> Any:
    """x + alpha * y (torch.add). Same-shape inputs run the kernel; anything else
    (broadcasting, mixed dtypes, integers) runs torch."""
    device = device_of(x)
    fits = None if (x.shape == y.shape and x.dtype == y.dtype and x.device == y.device
                    and dtype_name(x) in TRITON_FLOATS) else "needs same-shape float tensors"
    if _dispatch.choose("add", device, impl, fits=fits) == "torch":
        result = add_reference(x, y, alpha=alpha)
        return result if out is None else check_out(out, result, "add").copy_(result)
    out = check_out(out, x, "add")
    n = x.numel()
    if n == 0:
        return out
    from portagpu.kernels._triton.elementwise import add_kernel

    config = _tuning.config("add", device.vendor, n)
    grid = (cdiv(n, config["BLOCK"]),)
    _dispatch.launch_triton(add_kernel, grid, x.contiguous(), y.contiguous(), out, n, float(alpha),
                            device=device, config=config)
    return out
