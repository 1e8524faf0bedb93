"""NVML through nvidia-ml-py (import name `pynvml`). NVML answers without
initialising CUDA, so probing through it leaves the process fork-safe."""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

from portagpu.backends._common import call, library_session, optional_import


def nvml() -> AbstractContextManager[ModuleType | None]:
    """An initialised pynvml, or None when the library or driver is absent."""
    return library_session(optional_import("pynvml"), "nvmlInit", "nvmlShutdown")


def handle(pynvml: ModuleType, index: int, pci_bus_id: str | None) -> Any:
    """NVML's handle for a device. CUDA and NVML may number devices differently
    (CUDA_VISIBLE_DEVICES), so the PCI bus id is the reliable key."""
    if pci_bus_id:
        found = call(pynvml.nvmlDeviceGetHandleByPciBusId, pci_bus_id)
        if found is not None:
            return found
    from portagpu.visibility import masked, visible_physical

    if masked("cuda"):
        order = visible_physical("cuda", call(getattr(pynvml, "nvmlDeviceGetCount", None)) or 0)
        if order is not None and index < len(order):
            index = order[index]  # CUDA's index -> NVML's
    return call(pynvml.nvmlDeviceGetHandleByIndex, index)
