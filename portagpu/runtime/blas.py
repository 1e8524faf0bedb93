"""`portagpu.matmul`: the vendor BLAS through the framework that owns the arrays.

torch tensors go to `torch.matmul` (cuBLAS/cuBLASLt on NVIDIA, rocBLAS or
hipBLASLt on AMD, MPS on Apple, MKL/OpenBLAS on CPU), CuPy arrays to
`cupy.matmul` (cuBLAS / hipBLAS-rocBLAS), numpy arrays to `numpy.matmul`.
Which library served the last call in this thread: `last_backend()`.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from typing import Any

from portagpu.errors import LaunchError


@dataclass(frozen=True)
class BlasCall:
    """Who served a `matmul`: library ("cuBLAS"), framework ("torch"), device ("cuda:0")."""

    library: str
    framework: str
    device: str

    def __str__(self) -> str:
        return f"{self.library} via {self.framework} on {self.device}"


_last = threading.local()


def last_backend() -> BlasCall | None:
    """What served the most recent `portagpu.matmul` in this thread (None before any)."""
    return getattr(_last, "call", None)


def _owner(value: Any) -> tuple[str, tuple[str | None, int | None]]:
    """(framework, where): where is (torch device type, index) of the memory
    that holds `value`; CuPy arrays have no torch type (None, device id)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        device = value.device
        return "torch", (device.type, device.index)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(value, cupy.ndarray):
        return "cupy", (None, value.data.device_id)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray):
        return "numpy", ("cpu", None)  # host memory, as torch names it
    raise LaunchError(
        f"matmul takes torch tensors, CuPy arrays or numpy arrays, got {type(value).__name__}"
    )


def _label(where: tuple[str | None, int | None]) -> str:
    kind, index = where
    return f"{kind or 'GPU'}:{index}" if index is not None else str(kind)


# (framework, where) -> BlasCall; the library is looked up once per place
_CALLS: dict[tuple[str, Any], BlasCall] = {}


def _describe(framework: str, where: tuple[str | None, int | None]) -> BlasCall:
    """Which backend's BLAS serves arrays of `framework` at `where`, labelled
    with the device string torch uses for that backend's device."""
    from portagpu.backends import backend_for_cupy, backend_for_torch

    kind, index = where
    backend = backend_for_cupy(sys.modules["cupy"]) if kind is None else backend_for_torch(kind)
    if backend is None:  # no registered backend owns this memory
        call = BlasCall("unknown", framework, _label(where))
    else:
        call = BlasCall(backend.blas_library(framework), framework, backend.torch_device(index or 0))
    _CALLS[(framework, where)] = call
    return call


# torch.Tensor and torch once a torch call has been served, and the
# BlasCall per torch.device: the common call (two plain torch tensors on one
# device, no `out`) is then a few attribute reads (~0.4 us) on top of torch's
_TORCH: list[Any] = [None, None]
_TORCH_CALLS: dict[Any, BlasCall] = {}


def matmul(a: Any, b: Any, out: Any = None) -> Any:
    """`a @ b` on the device and framework that own `a` and `b` (and `out`)."""
    tensor = _TORCH[0]
    if type(a) is tensor and type(b) is tensor and out is None:
        where = a.device
        call = _TORCH_CALLS.get(where)
        if call is not None and b.device == where:
            result = _TORCH[1].matmul(a, b)
            _last.call = call
            return result
    return _matmul(a, b, out)


def _matmul(a: Any, b: Any, out: Any) -> Any:
    place = _owner(a)
    for other in (b,) if out is None else (b, out):
        other_place = _owner(other)
        if other_place[0] != place[0]:
            raise LaunchError(f"matmul: mixed frameworks ({place[0]} and {other_place[0]}); "
                              "convert with torch.from_dlpack / cupy.from_dlpack first")
        if other_place[1] != place[1]:
            raise LaunchError(f"matmul: arrays on different devices "
                              f"({_label(place[1])} and {_label(other_place[1])})")
    framework = place[0]
    if framework == "torch":
        torch = sys.modules["torch"]
        result = torch.matmul(a, b) if out is None else torch.matmul(a, b, out=out)
    elif framework == "cupy":
        result = sys.modules["cupy"].matmul(a, b, out=out)
    else:
        result = sys.modules["numpy"].matmul(a, b, out=out)
    call = _last.call = _CALLS.get(place) or _describe(*place)
    if framework == "torch" and len(_TORCH_CALLS) < 64:
        _TORCH[:] = [torch.Tensor, torch]
        _TORCH_CALLS[a.device] = call
    return result
