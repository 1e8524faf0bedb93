"""MPS readings: torch reports memory only; the rest needs root (powermetrics)."""

from __future__ import annotations

from portagpu.backends._common import loaded
from portagpu.device import Device
from portagpu.readings import Telemetry


def read(device: Device) -> Telemetry:
    torch = loaded("torch")
    if torch is None:
        return Telemetry(source="unavailable: torch is not imported")
    try:
        used = int(torch.mps.driver_allocated_memory())
    except Exception:  # noqa: BLE001
        used = None
    return Telemetry(memory_used=used, memory_total=device.memory_total, source="torch.mps")
