"""Small helpers shared by the kernel families."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from portagpu.errors import LaunchError

TRITON_FLOATS = ("float32", "float16", "bfloat16")


def dtype_name(tensor: Any) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_power_of_2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def new_out(like: Any) -> Any:
    """A new contiguous tensor shaped and typed like `like` (empty_like keeps a
    contiguous input's layout, and is the cheapest torch allocation call)."""
    import torch

    if like.is_contiguous():
        return torch.empty_like(like)
    return torch.empty_like(like, memory_format=torch.contiguous_format)


TEMPLATE_BYTES = 1 << 16  # outputs up to this size get a template of their own


def empty_maker(shape: tuple[int, ...], dtype: Any, device: Any) -> Callable[[], Any]:
    """A function of no arguments returning a new contiguous tensor of `shape`
    and `dtype` on `device` (a torch device), for a plan to call per call:
    torch.empty_like of a template, which parses no sizes from Python. On the
    H200 host (benchmarks/host_profile.py) empty_like of a contiguous tensor
    took 1.75 us, new_empty(int) 1.91, empty_like of a one-element tensor
    expanded to the shape 2.04 (no memory held), new_empty(tuple) 2.58: small
    outputs (up to TEMPLATE_BYTES) keep a contiguous template, larger ones
    the expanded one; torch.empty where neither gives a contiguous tensor."""
    import torch

    template = torch.empty(shape, dtype=dtype, device=device)
    if template.numel() * template.element_size() > TEMPLATE_BYTES:
        template = torch.empty((), dtype=dtype, device=device).expand(shape)
    made = torch.empty_like(template)
    if made.is_contiguous() and made.shape == template.shape:
        return functools.partial(torch.empty_like, template)
    return functools.partial(torch.empty, shape, dtype=dtype, device=device)


def check_out(out: Any, like: Any, name: str) -> Any:
    """`out` if given and shaped/typed like `like` (contiguous), else a new empty tensor."""

    if out is None:
        return new_out(like)
    if out.shape != like.shape or out.dtype != like.dtype or out.device != like.device:
        raise LaunchError(
            f"{name}: out has shape {tuple(out.shape)}, {out.dtype} on {out.device}; "
            f"expected {tuple(like.shape)}, {like.dtype} on {like.device}")
    if not out.is_contiguous():
        raise LaunchError(f"{name}: out must be contiguous")
    return out


def as_rows(x: Any, dim: int) -> tuple[Any, int, int]:
    """`x` with `dim` moved last and made contiguous, as (tensor, rows, cols)."""
    moved = x.movedim(dim, -1).contiguous() if dim not in (-1, x.ndim - 1) else x.contiguous()
    cols = moved.shape[-1] if moved.ndim else 1
    rows = moved.numel() // cols if cols else 0
    return moved, rows, cols


def persistent_grid(device: Any, config: dict[str, Any], per_sm_key: str, max_key: str = "max_programs") -> int:
    """How many persistent programs/blocks to launch: `per_sm_key` per SM/CU on a
    GPU, `max_key` where the device does not say how many it has."""
    if device.is_gpu and device.multiprocessors:
        return max(1, int(config.get(per_sm_key, 4)) * int(device.multiprocessors))
    return max(1, int(config.get(max_key, 4)))
