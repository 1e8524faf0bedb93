"""What GPU (or CPU) is here: `detect()` and `devices()`.

Each vendor's probe lives in its backend module (portagpu/backends/<vendor>);
this module orders them, applies the PORTAGPU_DEVICE override and caches.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from portagpu import backends as _backends
from portagpu.errors import ConfigError, DeviceNotFoundError

# Built-in names; a backend registered through the `portagpu.backends` entry
# points brings its own (see portagpu/backends/__init__.py).
Vendor = str  # "nvidia", "amd", "apple", "cpu", ...
BackendName = str  # "cuda", "rocm", "mps", "cpu", ...

ENV_VAR = "PORTAGPU_DEVICE"

#: Bumped whenever detection runs anew or the cache is cleared. Hot paths (each
#: kernel launch) keep the Device they got and compare this int, instead of
#: calling detect(), which re-reads PORTAGPU_DEVICE (~1 us). Read-only.
detection_count = 0
_bound: Device | None = None  # set by bind()


def __getattr__(name: str) -> Any:
    if name == "BACKEND_NAMES":  # the registered backends, in detection order
        return _backends.backend_names()
    raise AttributeError(f"module 'portagpu.device' has no attribute {name!r}")


@dataclass(frozen=True)
class Device:
    """One compute device, as the most trusted available library reports it."""

    vendor: Vendor
    backend: BackendName
    index: int
    name: str
    arch: str | None  # "sm_90", "gfx942", "x86_64" for CPUs; None if unknown
    warp_size: int | None  # 32 or 64 on GPUs; None on CPU
    multiprocessors: int | None  # SMs / CUs / GPU cores / CPU cores
    memory_total: int | None  # bytes
    blas: str  # "cuBLAS", "rocBLAS/hipBLASLt", "MPS", "OpenBLAS", ...
    runtime_version: str | None = None  # CUDA / HIP / torch runtime
    driver_version: str | None = None
    pci_bus_id: str | None = None  # ties the device to NVML / amdsmi handles
    source: str = ""  # library the facts came from: torch, cupy, nvml, amdsmi, os

    @property
    def is_gpu(self) -> bool:
        backend = _backends.find_backend(self.backend)
        return backend is not None and backend.is_gpu

    @property
    def torch_device(self) -> str:
        """The device string torch uses for this device (ROCm is "cuda" in torch)."""
        return _backends.get_backend(self.backend).torch_device(self.index)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _requested_backend() -> BackendName | None:
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if not value:
        return None
    names = _backends.backend_names()
    if value not in names:
        raise ConfigError(f"{ENV_VAR}={value!r} is not a backend; use one of: {', '.join(names)}")
    return value


@cache
def _devices(requested: BackendName | None) -> tuple[Device, ...]:
    global detection_count
    detection_count += 1

    if requested is not None:
        backend = _backends.get_backend(requested)
        found = tuple(backend.probe(force=True))
        if not found:
            raise DeviceNotFoundError(
                f"{ENV_VAR}={requested} asked for {backend.display_name}, "
                f"but none was found: {backend.absence_reason()}"
            )
        return found
    for backend in _backends.all_backends():
        found = tuple(backend.probe(force=False))
        if found:
            return found
    raise DeviceNotFoundError("no device found, not even the CPU")  # pragma: no cover


def devices() -> list[Device]:
    """All devices of the chosen backend (the first present in detection order:
    CUDA, ROCm, MPS, then any registered backend by priority, then the CPU)."""
    return list(_devices(_requested_backend()))


def detect() -> Device:
    """The device portagpu runs on: the first of `devices()`, or this rank's
    device once portagpu.distributed.init() has bound one. Cached per process."""
    found = _devices(_requested_backend())[0]
    return found if _bound is None else _bound


def bind(device: Device | None) -> None:
    """Make `device` the one detect() returns (portagpu.distributed.init binds
    each rank's device); None returns to the first of devices()."""
    global _bound, detection_count
    _bound = device
    detection_count += 1  # launches configured for the old device reconfigure


def clear_cache() -> None:
    """Forget what was detected (tests, or after changing PORTAGPU_DEVICE)."""
    global detection_count
    detection_count += 1
    _devices.cache_clear()
    _device_at.cache_clear()


def device_of(tensor: Any) -> Device:
    """The Device a torch tensor lives on, whichever backend detection chose
    (a CPU tensor on a GPU host is on the CPU device). Kernels use it."""
    where = tensor.device
    return _device_at(where.type, where.index or 0)


@cache
def _device_at(torch_type: str, index: int) -> Device:
    backend = _backends.backend_for_torch(torch_type)
    if backend is None:  # a torch device no backend is registered for: facts unknown
        return Device(
            vendor=torch_type,
            backend=torch_type,
            index=index,
            name=torch_type,
            arch=None,
            warp_size=None,
            multiprocessors=None,
            memory_total=None,
            blas="",
            source="torch",
        )
    try:
        for device in backend.probe(force=True):
            if device.index == index:
                return device
    except Exception:  # noqa: BLE001 - a broken probe must not stop a kernel
        pass
    return Device(
        vendor=backend.vendor,
        backend=backend.name,
        index=index,
        name=backend.torch_device(index),
        arch=None,
        warp_size=backend.warp_size_for(None),
        multiprocessors=None,
        memory_total=None,
        blas="",
        source="torch",
    )
