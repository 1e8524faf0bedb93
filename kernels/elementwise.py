"""Elementwise kernels: add (axpy), memory-bound."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from portagpu.kernels import _dispatch, _tuning
from portagpu.kernels._common import TRITON_FLOATS, cdiv, check_out, dtype_name

from portagpu.device import device_of
from portagpu.runtime.dispatch import prepare_launch

_PLANS = _dispatch.plan_cache()
_env_impl = _dispatch.env_impl


def add_reference(x: Any, y: Any, *, alpha: float = 1.0) -> Any:
    import torch

    return torch.add(x, y, alpha=alpha)


def add(x: Any, y: Any, *, alpha: float = 1.0, out: Any = None, impl: str | None = None) -> Any:
    """x + alpha * y (torch.add). Same-shape inputs run the kernel; anything else
    (broadcasting, mixed dtypes, integers) runs torch."""
    key = (x.shape, x.dtype, x.device, x.is_contiguous(), getattr(y, "shape", None), getattr(y, "dtype", None),
           getattr(y, "device", None), impl, _env_impl())
    plan = _PLANS.get(key)
    if plan is None:
        plan = _dispatch.remember(_PLANS, key, _plan(x, y, impl))
    return plan(x, y, alpha, out)


def _plan(x: Any, y: Any, impl: str | None) -> Callable[..., Any]:
    """What every call with these inputs' shapes, dtypes and devices does."""
    device = device_of(x)
    fits = None if (getattr(y, "shape", None) == x.shape and y.dtype == x.dtype and y.device == x.device
                    and dtype_name(x) in TRITON_FLOATS) else "needs same-shape float tensors"
    if _dispatch.choose("add", device, impl, fits=fits) == "torch":

        def reference(x: Any, y: Any, alpha: float, out: Any) -> Any:
            _dispatch.record("torch")
            result = add_reference(x, y, alpha=alpha)
            return result if out is None else check_out(out, result, "add").copy_(result)

        return reference
    from portagpu.kernels._triton.elementwise import add_kernel

    n = x.numel()
    config = _tuning.config("add", device.vendor, n)
    grid = (cdiv(n, config["BLOCK"]),)
    plans: dict[float, Callable[..., Any]] = {}  # per alpha, a constant of the launch
    last = _dispatch._last

    def run(x: Any, y: Any, alpha: float, out: Any) -> Any:
        last.impl = "triton"
        out = check_out(out, x, "add")
        if n:
            go = plans.get(alpha)
            if go is None:
                if len(plans) >= 16:
                    plans.clear()
                # a plan is per dtype and device of x and y; out is checked alike: trusted
                go = plans[alpha] = prepare_launch(add_kernel, grid, (None, None, None, n, float(alpha)),
                                                   (0, 1, 2), *_dispatch.triton_meta(config), device,
                                                   trusted=True)
            go(x.contiguous(), y.contiguous(), out)
        return out

    return run
