"""NVML through nvidia-ml-py (import name `pynvml`). NVML answers without
initialising CUDA, so probing through it leaves the process fork-safe."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from portagpu.backends._common import optional_import


@contextmanager
def nvml() -> Iterator[ModuleType | None]:
    """Yields an initialised pynvml, or None when the library or driver is absent."""
    pynvml = optional_import("pynvml")
    if pynvml is None:
        yield None
        return
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ...
        yield None
        return
    try:
        yield pynvml
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def call(fn: Any, *args: Any) -> Any:
    """One NVML query; None when this GPU or driver does not support it."""
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - NVMLError_NotSupported and friends
        return None


def handle(pynvml: ModuleType, index: int, pci_bus_id: str | None) -> Any:
    """NVML's handle for a device. CUDA and NVML may number devices differently
    (CUDA_VISIBLE_DEVICES), so the PCI bus id is the reliable key."""
    if pci_bus_id:
        found = call(pynvml.nvmlDeviceGetHandleByPciBusId, pci_bus_id)
        if found is not None:
            return found
    return call(pynvml.nvmlDeviceGetHandleByIndex, index)
