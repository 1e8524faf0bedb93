"""portagpu: run and lint GPU code across NVIDIA, AMD, Apple and CPU.

Importing portagpu is cheap and changes nothing in the process (no environment
variable, in particular not TRITON_INTERPRET): torch, cupy and triton are
imported only when a function that needs them is called. Public names resolve
lazily below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from portagpu._version import __version__

# public name -> module that defines it
_LAZY = {
    "Device": "portagpu.device",
    "detect": "portagpu.device",
    "devices": "portagpu.device",
    "Telemetry": "portagpu.readings",
    "telemetry": "portagpu.readings",
    "PortagpuError": "portagpu.errors",
    "DeviceNotFoundError": "portagpu.errors",
    "launch": "portagpu.runtime",
    "reference_for": "portagpu.runtime",
    "CudaKernel": "portagpu.runtime",
    "CudaModule": "portagpu.runtime",
    "matmul": "portagpu.runtime",
    "last_backend": "portagpu.runtime",
    "restrict_visible_devices": "portagpu.visibility",
}
_SUBMODULES = {"kernels", "lint", "hipify_bridge", "runtime", "backends", "cuda", "distributed"}

__all__ = ["__version__", *_LAZY]

if TYPE_CHECKING:  # pragma: no cover
    from portagpu.device import Device, detect, devices  # noqa: F401
    from portagpu.errors import DeviceNotFoundError, PortagpuError  # noqa: F401
    from portagpu.readings import Telemetry, telemetry  # noqa: F401


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"portagpu.{name}")
    raise AttributeError(f"module 'portagpu' has no attribute {name!r}")
