"""LayerNorm forward (torch.nn.functional.layer_norm), computed in fp32."""

from __future__ import annotations

import math
from typing import Any

from portagpu.kernels import _dispatch, _tuning
from portagpu.kernels._common import TRITON_FLOATS, check_out, dtype_name, next_power_of_2

from portagpu.device import device_of
from portagpu.errors import LaunchError


def layer_norm_reference(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
                         eps: float = 1e-5) -> Any:
    import torch.nn.functional as F  # noqa: N812

    return F.layer_norm(x, _shape(normalized_shape), weight, bias, eps)


def layer_norm(x: Any, normalized_shape: int | tuple[int, ...] | list[int], weight: Any = None,
               bias: Any = None, eps: float = 1e-5, *, out: Any = None, impl: str | None = None) -> Any:
    """Normalise over the last len(normalized_shape) dims, then scale and shift."""
    shape = _shape(normalized_shape)
    if tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise LaunchError(f"layer_norm: normalized_shape {shape} does not end x's shape {tuple(x.shape)}")
    device = device_of(x)
    params_ok = all(p is None or (tuple(p.shape) == shape and p.device == x.device) for p in (weight, bias))
    fits = (None if dtype_name(x) in TRITON_FLOATS and params_ok
            else "needs a float tensor and weight/bias of normalized_shape")
    if _dispatch.choose("layer_norm", device, impl, fits=fits, empty=x.numel() == 0) == "torch":
        result = layer_norm_reference(x, shape, weight, bias, eps)
        return result if out is None else check_out(out, result, "layer_norm").copy_(result)
    out = check_out(out, x, "layer_norm")
    cols = math.prod(shape)
    rows = x.numel() // cols
    x_rows = x.contiguous().view(rows, cols)
    config = _tuning.config("layer_norm", device.vendor, cols)
    from portagpu.kernels._triton import layer_norm as kernels

    fused = cols <= config["max_fused_cols"]
    kernel = kernels.layer_norm_kernel if fused else kernels.layer_norm_looped_kernel
    block = max(16, next_power_of_2(cols)) if fused else config["BLOCK"]
    weight_arg = weight.contiguous() if weight is not None else x_rows  # unused when absent
    bias_arg = bias.contiguous() if bias is not None else x_rows
    _dispatch.launch_triton(kernel, (rows,), x_rows, weight_arg, bias_arg, out, cols, cols, cols,
                            float(eps), device=device, config=config, HAS_WEIGHT=weight is not None,
                            HAS_BIAS=bias is not None, BLOCK=block)
    return out


def _shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(d) for d in normalized_shape)
