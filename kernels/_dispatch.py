"""Pick an implementation per call (argument > PORTAGPU_KERNELS_IMPL > tuning table),
remember which one ran, and launch Triton kernels.

Every launch goes through `portagpu.launch`, so the runtime's warp scaling,
vendor options and CPU interpreter apply.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from portagpu.kernels import _tuning
from portagpu.kernels._target import Target

from portagpu.errors import LaunchError

ENV_IMPL = "PORTAGPU_KERNELS_IMPL"
LAUNCH_OPTIONS = ("num_warps", "num_stages", "matrix_instr_nonkdim", "waves_per_eu", "kpack")

_last = threading.local()


def last_impl() -> str | None:
    """The implementation the last kernel call in this thread ran: triton, cuda or torch."""
    return getattr(_last, "impl", None)


def _record(impl: str) -> str:
    _last.impl = impl
    return impl


def choose(kernel: str, target: Target, requested: str | None, *,
           impls: tuple[str, ...] = ("triton", "torch"), fits: str | None = None) -> str:
    """The implementation to run, recorded for `last_impl()`.

    `impls` are the implementations this kernel has; `fits` says why the inputs
    suit only the torch reference (None: they suit all). An explicit request
    (argument or PORTAGPU_KERNELS_IMPL) that cannot run raises LaunchError; a
    table default that cannot run falls back to the torch reference."""
    explicit = requested or os.environ.get(ENV_IMPL) or None
    if explicit is not None:
        if explicit not in _tuning.IMPLS:
            raise LaunchError(f"{kernel}: impl={explicit!r}; use one of {', '.join(_tuning.IMPLS)}")
        if explicit not in impls:
            raise LaunchError(f"{kernel}: has no {explicit} implementation (has {', '.join(impls)})")
        why = fits if explicit != "torch" else None
        why = why or unavailable(explicit, target)
        if why:
            raise LaunchError(f"{kernel}: impl={explicit!r} cannot run on {target.name}: {why}")
        return _record(explicit)
    impl = _tuning.default_impl(kernel, target.vendor)
    if impl not in impls or fits or unavailable(impl, target):
        impl = "torch"
    return _record(impl)


def unavailable(impl: str, target: Target) -> str | None:
    """Why `impl` cannot run on `target`, or None when it can."""
    if impl == "torch":
        return None
    if impl == "cuda":
        return None if target.backend in ("cuda", "rocm") else "CUDA C needs an NVIDIA or AMD GPU"
    if target.backend in ("cuda", "rocm"):
        return None if _triton_importable() else "triton is not installed"
    if target.backend == "cpu":
        return None if triton_interpreting() else (
            "Triton runs on the CPU only in its interpreter; set TRITON_INTERPRET=1 "
            "before triton is imported")
    return f"Triton has no {target.backend} backend"


def _triton_importable() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def triton_interpreting() -> bool:
    """True when Triton kernels (and Triton's own tl.* helpers) run in the interpreter."""
    if os.environ.get("TRITON_INTERPRET", "0") in ("", "0") or not _triton_importable():
        return False
    import triton.language as tl

    # tl.sum and friends were decorated when triton was imported: if the variable
    # was set later, they are compiled functions that the interpreter cannot call.
    return type(tl.standard.sum).__name__ == "InterpretedFunction"


def launch_triton(kernel: Any, grid: tuple[int, ...], *args: Any, target: Target,
                  config: dict[str, Any], **constexprs: Any) -> None:
    """Launch through `portagpu.launch` with the table row's options and its
    constexprs (CAPITALISED keys); `constexprs` override the row's. The runtime
    scales num_warps (32-thread units) to the wavefront size, drops options of
    other vendors and runs the interpreter where there is no GPU."""
    import portagpu

    meta = {k: v for k, v in config.items() if k.isupper() or k in LAUNCH_OPTIONS}
    meta.update(constexprs)
    portagpu.launch(kernel, grid, *args, **meta)
