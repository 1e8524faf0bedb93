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


def _owner(value: Any) -> tuple[str, str, str]:
    """(framework, backend name, device string) of an array."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        kind = value.device.type
        if kind == "cuda":
            backend = "rocm" if torch.version.hip else "cuda"
        elif kind in ("mps", "cpu"):
            backend = kind
        else:
            raise LaunchError(f"matmul: torch device {value.device} is not supported")
        return "torch", backend, str(value.device)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(value, cupy.ndarray):
        backend = "rocm" if cupy.cuda.runtime.is_hip else "cuda"
        return "cupy", backend, f"cuda:{value.device.id}"
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray):
        return "numpy", "cpu", "cpu"
    raise LaunchError(
        f"matmul takes torch tensors, CuPy arrays or numpy arrays, got {type(value).__name__}"
    )


def matmul(a: Any, b: Any, out: Any = None) -> Any:
    """`a @ b` on the device and framework that own `a` and `b` (and `out`)."""
    from portagpu.backends import get_backend

    owners = [_owner(x) for x in ((a, b) if out is None else (a, b, out))]
    framework, backend_name, device = owners[0]
    for other in owners[1:]:
        if other[0] != framework:
            raise LaunchError(f"matmul: mixed frameworks ({framework} and {other[0]}); "
                              "convert with torch.from_dlpack / cupy.from_dlpack first")
        if other[2] != device:
            raise LaunchError(f"matmul: arrays on different devices ({device} and {other[2]})")
    if framework == "torch":
        import torch

        result = torch.matmul(a, b) if out is None else torch.matmul(a, b, out=out)
    elif framework == "cupy":
        import cupy

        result = cupy.matmul(a, b, out=out)
    else:
        import numpy

        result = numpy.matmul(a, b, out=out)
    _last.call = BlasCall(get_backend(backend_name).blas_library(framework), framework, device)
    return result
