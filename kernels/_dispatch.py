"""Pick an implementation per call (argument > PORTAGPU_KERNELS_IMPL > tuning table),
remember which one ran, and launch Triton kernels.

Every launch goes through `portagpu.launch` (or its tuple form,
`launch_prepared`), so the runtime's warp scaling, vendor options and CPU
interpreter apply.

Per call shape: what a kernel function decides from its inputs' shape, dtype,
device and options (the implementation, the table row, grid, constexprs) is
worked out once and kept as a plan in a `plan_cache()`; later calls of that
shape look the plan up and run it, which leaves allocation and the launch
itself as the per-call work (benchmarks/kernels_bench.py reports host us per
call next to torch's).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any

from portagpu.kernels import _tuning

from portagpu.backends import all_backends, find_backend
from portagpu.device import Device
from portagpu.errors import LaunchError

ENV_IMPL = "PORTAGPU_KERNELS_IMPL"
# table keys handed to portagpu.launch besides the CAPITALISED constexprs; the
# vendors' own Triton options (each backend's triton_options) are added to these
LAUNCH_OPTIONS = ("num_warps", "num_stages")

_last = threading.local()


def last_impl() -> str | None:
    """The implementation the last kernel call in this thread ran: triton, cuda or torch."""
    return getattr(_last, "impl", None)


def _record(impl: str) -> str:
    _last.impl = impl
    return impl


record = _record


# --- plans per call shape ------------------------------------------------------------
MAX_PLANS = 256  # per kernel function; a program with more shapes starts over
_PLAN_CACHES: list[dict] = []
# PORTAGPU_KERNELS_IMPL is part of every plan key: read os.environ's mapping
# directly (os.environ.get encodes the key and decodes the value: ~0.7 us)
_ENVIRON = getattr(os.environ, "_data", None)
_ENV_KEY = os.environ.encodekey(ENV_IMPL) if hasattr(os.environ, "encodekey") else ENV_IMPL


_LAST_PLANS: list[list] = []
_NO_PLAN = (None, None)


def plan_cache() -> dict:
    """A dict for one kernel function's plans; forget_plans() empties it."""
    cache: dict = {}
    _PLAN_CACHES.append(cache)
    return cache


def last_plan() -> list:
    """One slot for a kernel function's last (key, plan), as one tuple (so a
    thread reads a key with its own plan): a loop repeating a call shape
    compares its key with the last one instead of hashing it (the shape, the
    torch.device) and looking it up. forget_plans() empties it."""
    slot = [_NO_PLAN]
    _LAST_PLANS.append(slot)
    return slot


def remember(cache: dict, key: Any, plan: Callable[..., Any]) -> Callable[..., Any]:
    if len(cache) >= MAX_PLANS:
        cache.clear()
    cache[key] = plan
    return plan


def planned_along_dim(name: str, make_plan: Callable[[Any, int, str | None], Callable[[Any, Any], Any]],
                      doc: str) -> Callable[..., Any]:
    """The public function of a kernel taking (x, dim=-1, *, out=None, impl=None)
    whose plans `make_plan(x, dim, impl)` makes per x's shape, dtype, device and
    layout, dim, impl and the environment variable (softmax, cumsum)."""
    plans, last = plan_cache(), last_plan()
    env = env_impl

    def kernel(x: Any, dim: int = -1, *, out: Any = None, impl: str | None = None) -> Any:
        key = (x.shape, x.dtype, x.device, x.is_contiguous(), dim, impl, env())
        hot = last[0]
        if key == hot[0]:
            return hot[1](x, out)
        plan = plans.get(key)
        if plan is None:
            plan = remember(plans, key, make_plan(x, dim, impl))
        last[0] = (key, plan)
        return plan(x, out)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__module__ = make_plan.__module__
    kernel.__doc__ = doc
    kernel.plans = plans  # type: ignore[attr-defined]  # for inspection (benchmarks/host_profile.py)
    return kernel


def forget_plans() -> None:
    """Forget every plan (after changing the tuning table, e.g. in a sweep)."""
    for cache in _PLAN_CACHES:
        cache.clear()
    for slot in _LAST_PLANS:
        slot[0] = _NO_PLAN


def _env_impl() -> Any:
    return os.environ.get(ENV_IMPL)


# PORTAGPU_KERNELS_IMPL as stored (for plan keys; `choose` reads it properly):
# a C-level call of the mapping's get where os.environ has one
env_impl: Callable[[], Any] = _env_impl if _ENVIRON is None else functools.partial(_ENVIRON.get, _ENV_KEY)


def choose(
    kernel: str,
    device: Device,
    requested: str | None,
    *,
    impls: tuple[str, ...] = ("triton", "torch"),
    fits: str | None = None,
    empty: bool = False,
) -> str:
    """The implementation to run, recorded for `last_impl()`.

    `impls` are the implementations this kernel has; `fits` says why the inputs
    suit only the torch reference (None: they suit all). An explicit request
    (argument or PORTAGPU_KERNELS_IMPL) that cannot run raises LaunchError; a
    table default that cannot run falls back to the torch reference. `empty`:
    the input has no elements, so no kernel is needed whatever was asked for;
    the request is still checked, then the torch reference answers (as for
    every implementation: an empty result has only a shape)."""
    chosen = _choose(kernel, device, requested, impls, fits)
    return _record("torch") if empty else chosen


def _choose(kernel: str, device: Device, requested: str | None, impls: tuple[str, ...], fits: str | None) -> str:
    explicit = requested or os.environ.get(ENV_IMPL) or None
    if explicit is not None:
        if explicit not in _tuning.IMPLS:
            raise LaunchError(f"{kernel}: impl={explicit!r}; use one of {', '.join(_tuning.IMPLS)}")
        if explicit not in impls:
            raise LaunchError(
                f"{kernel}: has no {explicit} implementation (has {', '.join(impls)})"
            )
        why = fits if explicit != "torch" else None
        why = why or unavailable(explicit, device)
        if why:
            raise LaunchError(f"{kernel}: impl={explicit!r} cannot run on {device.name}: {why}")
        return _record(explicit)
    impl = _tuning.default_impl(kernel, device.vendor)
    if impl not in impls or fits or unavailable(impl, device):
        impl = "torch"
    return _record(impl)


def unavailable(impl: str, device: Device) -> str | None:
    """Why `impl` (a kernel language: triton, cuda or torch) cannot run on
    `device`, or None when it can. The device's backend says what it runs."""
    if impl == "torch":
        return None
    backend = find_backend(device.backend)
    if backend is None:
        return f"portagpu has no {device.backend} backend"
    if impl == "cuda":
        if backend.cuda_compiler() is not None:
            return None
        able = [b.display_name for b in all_backends() if b.cuda_compiler() is not None]
        return f"CUDA C needs a GPU whose backend compiles it ({', '.join(able)})"
    if backend.triton_mode == "native":
        return None if _importable("triton") else "triton is not installed"
    # The interpreter runs on host copies of the tensors: worth it on the CPU
    # (tests, no GPU); on a GPU without a Triton backend the torch reference wins.
    if backend.triton_mode == "interpreted" and not backend.is_gpu:
        if not (_importable("triton") and _importable("numpy")):
            return "Triton's interpreter needs triton and numpy installed"
        return _beside_a_triton_gpu()
    return f"Triton has no {device.backend} backend"


def _beside_a_triton_gpu() -> str | None:
    """Why the interpreter must not run in this process: it compiles Triton
    kernels for a GPU too. The interpreter patches triton.language while it
    runs, and Triton 3.6 leaves it patched when an interpreted kernel raises
    (seen on the GPU machine: every later GPU compile failed)."""
    from portagpu.backends import backend_for
    from portagpu.runtime.dispatch import current_device

    if backend_for(current_device()).triton_mode == "native":
        return ("Triton's interpreter is not run beside a Triton GPU backend in one process "
                "(it patches triton.language while it runs)")
    return None


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _launch_options() -> frozenset[str]:
    return frozenset(LAUNCH_OPTIONS).union(*(b.triton_options for b in all_backends()))


def launch_triton(
    kernel: Any,
    grid: tuple[int, ...],
    *args: Any,
    device: Device,
    config: dict[str, Any],
    **constexprs: Any,
) -> None:
    """Launch through `portagpu.launch` with the table row's options and its
    constexprs (CAPITALISED keys); `constexprs` override the row's. The runtime
    scales num_warps (32-thread units) to the wavefront size, drops options of
    other vendors and runs the interpreter where there is no GPU."""
    import portagpu

    num_warps, meta = triton_meta(config, **constexprs)
    portagpu.launch(kernel, grid, *args, num_warps=num_warps, **meta)


def triton_meta(config: dict[str, Any], **constexprs: Any) -> tuple[int | None, dict[str, Any]]:
    """(num_warps, meta) of a table row for `launch_prepared`: the row's
    options and constexprs (CAPITALISED keys), `constexprs` overriding them."""
    options = _launch_options()
    meta = {k: v for k, v in config.items() if k.isupper() or k in options}
    meta.update(constexprs)
    return meta.pop("num_warps", None), meta
