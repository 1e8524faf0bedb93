"""`portagpu.launch`: one call for Triton kernels and CUDA C source kernels."""

from __future__ import annotations

from typing import Any

from portagpu import device as _device_module
from portagpu.device import detect
from portagpu.errors import LaunchError
from portagpu.runtime.cuda_source import CudaKernel
from portagpu.runtime.triton_launch import TritonLauncher, is_triton_kernel

# id(kernel) -> its launcher. Keyed by id because JITFunction.__hash__ hashes
# its source digest under a lock (~0.5 us a call); the launcher holds the
# kernel, so the id cannot be reused while the entry exists. Triton kernels are
# module-level objects that live as long as the process anyway.
_TRITON: dict[int, TritonLauncher] = {}

# detect() re-reads PORTAGPU_DEVICE on every call (~1 us); launches reuse the
# device until the device layer detects anew (clear_cache(), or detect() seeing
# a new PORTAGPU_DEVICE value), which bumps its detection_count.
_cached: list[Any] = [-1, None]  # [detection_count when read, Device]


def triton_launcher(kernel: Any) -> TritonLauncher | None:
    """The launcher (and fast-path caches) of a Triton kernel launched before."""
    return _TRITON.get(id(kernel))


def current_device() -> Any:
    if _cached[0] == _device_module.detection_count:
        return _cached[1]
    device = detect()
    _cached[:] = [_device_module.detection_count, device]
    return device


def launch(kernel: Any, grid: Any, *args: Any, num_warps: int | None = None, block: Any = None,
           stream: Any = None, **meta: Any) -> None:
    """Launch `kernel` on the device `portagpu.detect()` found.

    Triton (`@triton.jit`, autotuned or not): `num_warps` in 32-thread units
    (scaled to the device's wavefront size), Triton options and constexprs
    in `meta`. CUDA C (`portagpu.CudaKernel`): `block` (default 256 threads),
    `stream` (default: the current stream of the framework that owns the
    arguments) and `shared_mem=` bytes. Raises LaunchError before launching
    when the arguments cannot run.
    """
    launcher = _TRITON.get(id(kernel))
    if launcher is not None:
        if block is not None:
            raise LaunchError("block= is for CudaKernel; Triton kernels take num_warps=")
        # The common case in one step: the device is the one the launcher was
        # configured for, and a generated function exists for this call shape.
        fast = None
        if stream is None and launcher.ready == _device_module.detection_count:
            fast = launcher.shapes.get(len(args))
            if fast is not None and fast(grid, args, num_warps, meta):
                return
        launcher(current_device(), grid, args, num_warps, stream, meta, try_fast=fast is None)
        launcher.ready = _cached[0] if launcher.fast else -1
        return
    if isinstance(kernel, CudaKernel):
        if num_warps is not None:
            raise LaunchError(f"num_warps= is for Triton kernels; {kernel!r} takes block=")
        fast = kernel._fast
        if (fast is not None and kernel._ready == _device_module.detection_count
                and fast(grid, args, block, stream, meta)):
            return
        kernel._launch(current_device(), grid, args, block, stream, meta)
        kernel._ready = _cached[0]
        return
    if is_triton_kernel(kernel):
        _TRITON[id(kernel)] = TritonLauncher(kernel)
        launch(kernel, grid, *args, num_warps=num_warps, block=block, stream=stream, **meta)
        return
    raise LaunchError(
        f"portagpu.launch takes a @triton.jit kernel or a portagpu.CudaKernel, "
        f"got {type(kernel).__module__}.{type(kernel).__name__}"
    )
