"""LayerNorm forward (torch.nn.functional.layer_norm), computed in fp32."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from portagpu.kernels import _dispatch, _tuning
from portagpu.kernels._common import TRITON_FLOATS, cdiv, check_out, dtype_name, next_power_of_2

from portagpu.device import device_of
from portagpu.errors import LaunchError
from portagpu.runtime.dispatch import prepare_launch

_PLANS = _dispatch.plan_cache()
_env_impl = _dispatch.env_impl


def layer_norm_reference(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
                         eps: float = 1e-5) -> Any:
    import torch.nn.functional as F  # noqa: N812

    return F.layer_norm(x, _shape(normalized_shape), weight, bias, eps)


def layer_norm(x: Any, normalized_shape: int | tuple[int, ...] | list[int], weight: Any = None,
               bias: Any = None, eps: float = 1e-5, *, out: Any = None, impl: str | None = None) -> Any:
    """Normalise over the last len(normalized_shape) dims, then scale and shift."""
    shape = (normalized_shape,) if type(normalized_shape) is int else _shape(normalized_shape)
    key = (x.shape, x.dtype, x.device, x.is_contiguous(), shape,
           None if weight is None else (weight.shape, weight.dtype, weight.device),
           None if bias is None else (bias.shape, bias.dtype, bias.device), eps, impl, _env_impl())
    plan = _PLANS.get(key)
    if plan is None:
        plan = _dispatch.remember(_PLANS, key, _plan(x, shape, weight, bias, float(eps), impl))
    return plan(x, weight, bias, out)


def _plan(x: Any, shape: tuple[int, ...], weight: Any, bias: Any, eps: float,
          impl: str | None) -> Callable[..., Any]:
    """What every call with these inputs' shapes, dtype, devices and layout does."""
    if tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise LaunchError(f"layer_norm: normalized_shape {shape} does not end x's shape {tuple(x.shape)}")
    device = device_of(x)
    params_ok = all(p is None or (tuple(p.shape) == shape and p.device == x.device) for p in (weight, bias))
    fits = (None if dtype_name(x) in TRITON_FLOATS and params_ok
            else "needs a float tensor and weight/bias of normalized_shape")
    if _dispatch.choose("layer_norm", device, impl, fits=fits, empty=x.numel() == 0) == "torch":

        def reference(x: Any, weight: Any, bias: Any, out: Any) -> Any:
            _dispatch.record("torch")
            result = layer_norm_reference(x, shape, weight, bias, eps)
            return result if out is None else check_out(out, result, "layer_norm").copy_(result)

        return reference
    import torch
    from portagpu.kernels._triton import layer_norm as kernels

    cols = math.prod(shape)
    rows = x.numel() // cols
    config = _tuning.config("layer_norm", device.vendor, cols)
    flags = {"HAS_WEIGHT": weight is not None, "HAS_BIAS": bias is not None}
    if cols <= config["max_fused_cols"]:
        per_program = int(config.get("ROWS", 1))
        kernel, grid, sizes = kernels.layer_norm_kernel, (cdiv(rows, per_program),), (rows, cols, cols, cols)
        num_warps, meta = _dispatch.triton_meta(config, **flags, ROWS=per_program,
                                                BLOCK=max(16, next_power_of_2(cols)))
    else:
        kernel, grid, sizes = kernels.layer_norm_looped_kernel, (rows,), (cols, cols, cols)
        num_warps, meta = _dispatch.triton_meta({k: v for k, v in config.items() if k != "ROWS"}, **flags)
    empty_like, last = torch.empty_like, _dispatch._last
    contiguous = x.is_contiguous()
    # a plan is per dtype and device of x, weight and bias; outputs are its own or
    # checked alike: trusted launches
    go = prepare_launch(kernel, grid, (None, None, None, None, *sizes, eps), (0, 1, 2, 3), num_warps, meta,
                        device, trusted=True)

    def run(x: Any, weight: Any, bias: Any, out: Any) -> Any:
        last.impl = "triton"
        if contiguous:
            out = empty_like(x) if out is None else check_out(out, x, "layer_norm")
        else:
            out = check_out(out, x, "layer_norm")
            x = x.contiguous()
        # absent weight/bias: the kernel does not read them (any pointer will do)
        go(x, x if weight is None else weight.contiguous(), x if bias is None else bias.contiguous(), out)
        return out

    return run


def _shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(d) for d in normalized_shape)
