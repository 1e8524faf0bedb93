"""Matrix products: plain GEMM goes to the vendor BLAS through `portagpu.matmul`;
`matmul_bias_act` fuses bias and activation into a Triton tl.dot kernel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from portagpu.kernels import _dispatch, _tuning
from portagpu.kernels._common import TRITON_FLOATS, cdiv, check_out, dtype_name, empty_maker

from portagpu.device import device_of
from portagpu.errors import LaunchError
from portagpu.runtime.dispatch import prepare_launch

_PLANS = _dispatch.plan_cache()
_env_impl = _dispatch.env_impl

ACTIVATIONS = {None: 0, "none": 0, "gelu": 1, "gelu_tanh": 2, "relu": 3, "silu": 4}


def matmul(a: Any, b: Any, out: Any = None) -> Any:
    """a @ b on the vendor BLAS (cuBLAS, rocBLAS/hipBLASLt, ...): `portagpu.matmul`."""
    import portagpu

    return portagpu.matmul(a, b, out=out)


def matmul_bias_act_reference(a: Any, b: Any, bias: Any = None, act: str | None = "gelu") -> Any:
    """The unfused torch sequence: matmul, + bias, activation."""
    import torch.nn.functional as F  # noqa: N812

    y = a @ b
    if bias is not None:
        y = y + bias
    if act in (None, "none"):
        return y
    if act == "gelu":
        return F.gelu(y)
    if act == "gelu_tanh":
        return F.gelu(y, approximate="tanh")
    if act == "relu":
        return F.relu(y)
    return F.silu(y)


def matmul_bias_act(a: Any, b: Any, bias: Any = None, act: str | None = "gelu", *,
                    out: Any = None, impl: str | None = None) -> Any:
    """act(a @ b + bias) for 2-D a (M, K), b (K, N), bias (N,); act one of
    gelu (exact), gelu_tanh, relu, silu, none."""
    key = (a.shape, b.shape, a.dtype, b.dtype, a.device, b.device, a.stride(), b.stride(),
           None if bias is None else (bias.shape, bias.dtype, bias.device),
           None if out is None else (out.shape, out.dtype, out.device, out.stride()), act, impl, _env_impl())
    plan = _PLANS.get(key)
    if plan is None:
        plan = _dispatch.remember(_PLANS, key, _plan(a, b, bias, act, out, impl))
    return plan(a, b, bias, out)


def _plan(a: Any, b: Any, bias: Any, act: str | None, out: Any, impl: str | None) -> Callable[..., Any]:
    """What every call with these shapes, strides, dtypes and devices does."""
    if act not in ACTIVATIONS:
        raise LaunchError(f"matmul_bias_act: act={act!r}; use one of "
                          f"{', '.join(str(k) for k in ACTIVATIONS if k)}")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise LaunchError(f"matmul_bias_act: cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
    M, K = a.shape  # noqa: N806
    N = b.shape[1]  # noqa: N806
    if bias is not None and tuple(bias.shape) != (N,):
        raise LaunchError(f"matmul_bias_act: bias must have shape ({N},), got {tuple(bias.shape)}")
    device = device_of(a)
    fits = (None if dtype_name(a) in TRITON_FLOATS and a.dtype == b.dtype and a.device == b.device
            and (bias is None or bias.device == a.device)
            else "needs two float matrices of one dtype, and bias on their device")
    # an empty product (M, N or K zero) needs no kernel: act(bias) or an empty matrix
    if _dispatch.choose("matmul_bias_act", device, impl, fits=fits, empty=M * N * K == 0) == "torch":

        def reference(a: Any, b: Any, bias: Any, out: Any) -> Any:
            _dispatch.record("torch")
            result = matmul_bias_act_reference(a, b, bias, act)
            return result if out is None else check_out(out, result, "matmul_bias_act").copy_(result)

        return reference
    import torch
    from portagpu.kernels._triton.matmul import matmul_bias_act_kernel

    if out is not None and (tuple(out.shape) != (M, N) or out.dtype != a.dtype or out.device != a.device):
        raise LaunchError(f"matmul_bias_act: out must be ({M}, {N}) {a.dtype} on {a.device}, "
                          f"got {tuple(out.shape)} {out.dtype} on {out.device}")
    config = _tuning.config("matmul_bias_act", device.vendor, max(M, N))
    if a.dtype == torch.float32:  # fp32 tiles take twice the shared memory/LDS: a row's `fp32` overrides
        config = {**config, **config.get("fp32", {})}
    grid = (cdiv(M, config["BLOCK_M"]) * cdiv(N, config["BLOCK_N"]),)
    # fp32 inputs stay fp32 (no TF32 rounding): torch's default for matmul is the same. For
    # 16-bit inputs the precision changes nothing on NVIDIA (identical cubins, sm_80 and sm_90)
    # and Triton's AMD backend refuses "tf32" on gfx90a and RDNA (portagpu check-kernels --builtin).
    precision = "ieee"
    new_out = empty_maker((M, N), a.dtype, a.device)
    out_strides = (N, 1) if out is None else out.stride()
    # a plan is per dtype, device and strides of a, b, bias and out: trusted launches
    go = prepare_launch(
        matmul_bias_act_kernel, grid, (None, None, None, None, M, N, K, *a.stride(), *b.stride(), *out_strides),
        (0, 1, 2, 3), *_dispatch.triton_meta(config, HAS_BIAS=bias is not None, ACT=ACTIVATIONS[act],
                                              INPUT_PRECISION=precision), device, trusted=True)
    last = _dispatch._last

    def run(a: Any, b: Any, bias: Any, out: Any) -> Any:
        last.impl = "triton"
        if out is None:
            out = new_out()
        # absent bias: the kernel does not read it (any pointer will do)
        go(a, b, a if bias is None else bias.contiguous(), out)
        return out

    return run
