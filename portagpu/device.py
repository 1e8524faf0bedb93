"""What GPU (or CPU) is here: `detect()` and `devices()`.

Each vendor's probe lives in its backend module (portagpu/backends/<vendor>);
this module orders them, applies the PORTAGPU_DEVICE override and caches.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any, Literal

from portagpu.errors import ConfigError, DeviceNotFoundError

Vendor = Literal["nvidia", "amd", "apple", "cpu"]
BackendName = Literal["cuda", "rocm", "mps", "cpu"]

ENV_VAR = "PORTAGPU_DEVICE"

#: Bumped whenever detection runs anew or the cache is cleared. Hot paths (each
#: kernel launch) keep the Device they got and compare this int, instead of
#: calling detect(), which re-reads PORTAGPU_DEVICE (~1 us). Read-only.
detection_count = 0
BACKEND_NAMES: tuple[BackendName, ...] = ("cuda", "rocm", "mps", "cpu")
_bound: Device | None = None  # set by bind()


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
        return self.backend != "cpu"

    @property
    def torch_device(self) -> str:
        """The device string torch uses for this device (ROCm is "cuda" in torch)."""
        if self.backend in ("cuda", "rocm"):
            return f"cuda:{self.index}"
        return "mps" if self.backend == "mps" else "cpu"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _requested_backend() -> BackendName | None:
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if not value:
        return None
    if value not in BACKEND_NAMES:
        raise ConfigError(
            f"{ENV_VAR}={value!r} is not a backend; use one of: {', '.join(BACKEND_NAMES)}"
        )
    return value  # type: ignore[return-value]


@cache
def _devices(requested: BackendName | None) -> tuple[Device, ...]:
    from portagpu.backends import all_backends, get_backend

    global detection_count
    detection_count += 1

    if requested is not None:
        backend = get_backend(requested)
        found = tuple(backend.probe(force=True))
        if not found:
            raise DeviceNotFoundError(
                f"{ENV_VAR}={requested} asked for {backend.display_name}, "
                f"but none was found: {backend.absence_reason()}"
            )
        return found
    for backend in all_backends():
        found = tuple(backend.probe(force=False))
        if found:
            return found
    raise DeviceNotFoundError("no device found, not even the CPU")  # pragma: no cover


def devices() -> list[Device]:
    """All devices of the chosen backend (the first present of CUDA, ROCm, MPS, CPU)."""
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
