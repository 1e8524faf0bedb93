"""`portagpu.launch`: one call for Triton kernels and CUDA C source kernels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from portagpu import device as _device_module
from portagpu.device import detect
from portagpu.errors import LaunchError
from portagpu.runtime.cuda_source import CudaKernel
from portagpu.runtime.triton_codegen import make_bound_launch
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


# (id(kernel), Device) -> the launcher of prepare_launch's launches of that
# kernel on that device: its own, so preparing a launch for one device never
# reconfigures the launcher other callers use (portagpu.launch's, above).
_PREPARED: dict[tuple[int, Any], TritonLauncher] = {}


def triton_launcher(kernel: Any) -> TritonLauncher | None:
    """The launcher (and fast-path caches) of a Triton kernel launched before."""
    return _TRITON.get(id(kernel))


def _shared_launcher(kernel: Any, what: str) -> TritonLauncher:
    launcher = _TRITON.get(id(kernel))
    if launcher is None:
        if not is_triton_kernel(kernel):
            raise LaunchError(f"{what} takes a @triton.jit kernel, got {type(kernel).__name__}")
        launcher = _TRITON[id(kernel)] = TritonLauncher(kernel)
    return launcher


def prepared_launcher(kernel: Any, device: Any) -> TritonLauncher:
    """The launcher prepare_launch uses for `kernel` on `device`, configured
    for it once (it shares the kernel's reference, see reference_for)."""
    key = (id(kernel), device)
    launcher = _PREPARED.get(key)
    if launcher is None:
        shared = _shared_launcher(kernel, "prepare_launch")
        launcher = _PREPARED[key] = TritonLauncher(kernel)
        launcher.reference = shared.reference
        launcher._configure(device)
    return launcher


def current_device() -> Any:
    if _cached[0] == _device_module.detection_count:
        return _cached[1]
    device = detect()
    _cached[:] = [_device_module.detection_count, device]
    return device


def launch(kernel: Any, grid: Any, *args: Any, num_warps: int | None = None, block: Any = None,
           stream: Any = None, interpret: bool | None = None, **meta: Any) -> None:
    """Launch `kernel` on the device `portagpu.detect()` found.

    Triton (`@triton.jit`, autotuned or not): `num_warps` in 32-thread units
    (scaled to the device's wavefront size), Triton options and constexprs
    in `meta`. Where Triton has no GPU backend (CPU, MPS) a kernel with a
    reference (`reference_for`) runs the reference, unless `interpret=True`
    asks for Triton's interpreter; without one it runs in the interpreter.
    CUDA C (`portagpu.CudaKernel`): `block` (default 256 threads), `stream`
    (default: the current stream of the framework that owns the arguments)
    and `shared_mem=` bytes. Raises LaunchError before launching when the
    arguments cannot run.
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
        launcher(current_device(), grid, args, num_warps, stream, meta, try_fast=fast is None,
                 interpret=interpret)
        launcher.ready = _cached[0] if launcher.fast else -1
        return
    if isinstance(kernel, CudaKernel):
        if num_warps is not None or interpret is not None:
            raise LaunchError(f"num_warps= and interpret= are for Triton kernels; {kernel!r} takes block=")
        fast = kernel._fast
        if (fast is not None and kernel._ready == _device_module.detection_count
                and fast(grid, args, block, stream, meta)):
            return
        kernel._launch(current_device(), grid, args, block, stream, meta)
        kernel._ready = _cached[0]
        return
    if is_triton_kernel(kernel):
        _TRITON[id(kernel)] = TritonLauncher(kernel)
        launch(kernel, grid, *args, num_warps=num_warps, block=block, stream=stream, interpret=interpret, **meta)
        return
    raise LaunchError(
        f"portagpu.launch takes a @triton.jit kernel or a portagpu.CudaKernel, "
        f"got {type(kernel).__module__}.{type(kernel).__name__}"
    )


def reference_for(kernel: Any, reference: Callable[..., Any] | None = None) -> Any:
    """Give a Triton kernel a reference: a function (torch, numpy) taking the
    kernel's arguments -- those passed positionally, then its constexprs by
    keyword -- and writing the same outputs in place, as CudaKernel's
    `reference` does. Where Triton has no GPU backend (CPU, MPS: Triton's
    interpreter, 1,000-10,000x slower than torch) launches run the reference;
    `portagpu.launch(..., interpret=True)` runs the interpreter instead. On a
    GPU Triton runs, the reference is not used. As a decorator:

        @portagpu.reference_for(add_kernel)
        def add(x, y, out, n, BLOCK):
            out[:n] = x[:n] + y[:n]
    """
    if reference is None:
        return lambda function: reference_for(kernel, function)
    if not is_triton_kernel(kernel):
        raise LaunchError(f"reference_for takes a @triton.jit kernel, got {type(kernel).__name__}"
                          " (CudaKernel takes reference= itself)")
    if not callable(reference):
        raise LaunchError(f"reference_for: the reference must be callable, got {type(reference).__name__}")
    _shared_launcher(kernel, "reference_for").reference = reference
    for (kernel_id, _), launcher in _PREPARED.items():
        if kernel_id == id(kernel):
            launcher.reference = reference
    return reference


def prepare_launch(kernel: Any, grid: tuple, args: tuple, varying: tuple[int, ...],
                   num_warps: int | None = None, meta: dict | None = None, device: Any = None,
                   *, trusted: bool = False) -> Callable[..., Any]:
    """A Triton launch worked out once, for a caller that repeats it with new
    tensors (portagpu.kernels keeps one per call shape): the returned function
    takes the tensors for the positions `varying` of `args` (whose values
    there are ignored) and launches `kernel` on `grid` with them, `num_warps`
    and `meta`, configured for `device` (default: the detected one;
    portagpu.kernels passes the tensors' device, so a CPU tensor on a GPU host
    runs in the interpreter). Each launch runs on its tensors' GPU, as a torch
    op does (placement.py). The launcher is this device's own
    (prepared_launcher): preparing changes nothing another caller uses.
    Where the backend has the Triton fast path it is generated code whose key
    is only the device and each tensor's dtype and alignment
    (triton_codegen.make_bound_launch); elsewhere it takes the launcher's
    general path. `trusted=True`: the caller vouches that every call passes
    tensors on the GPU `device` with the dtypes of the first call
    (portagpu.kernels: its plans are per dtype and device, and it allocates
    the outputs), so neither is read again: the key is the device and the
    alignment, and the current device is compared with `device` only when
    the key is not found (no cost where `device` is current)."""
    meta = dict(meta or {})
    template = list(args)
    for position in varying:
        template[position] = None  # the caller's tensors are not kept alive here
    home = None if device is None else device.index  # a device named by the caller: launches run there
    device = device or current_device()
    launcher = prepared_launcher(kernel, device)

    def general(*tensors: Any) -> None:
        full = list(template)
        for position, value in zip(varying, tensors, strict=True):
            full[position] = value
        launcher(device, grid, tuple(full), num_warps, None, meta)

    if not (launcher.fast and type(grid) is tuple and launcher.foreign.isdisjoint(meta)
            and launcher._plan(len(args), tuple(meta)) is not None):
        return general
    nw = None if num_warps is None else launcher.scale_warps(num_warps)
    # a device the caller named: launches do not depend on what detect() says
    # (kernels prepared before the first detection kept falling back after it)
    detection = _device_module if home is None else None
    bound = make_bound_launch(launcher, grid, tuple(template), tuple(varying), nw, meta, detection, general,
                              trusted, home)
    return bound or general
