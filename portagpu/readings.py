"""Live device readings in one set of units: bytes, percent, degrees C, watts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from portagpu.device import Device


@dataclass(frozen=True)
class Telemetry:
    memory_used: int | None = None  # bytes
    memory_total: int | None = None  # bytes
    utilization: float | None = None  # percent, 0-100
    temperature: float | None = None  # degrees C
    power: float | None = None  # watts
    source: str = ""  # library that answered, or why none did

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def telemetry(device: Device | None = None) -> Telemetry:
    """Readings for `device` (default: `portagpu.detect()`)."""
    from portagpu.backends import backend_for
    from portagpu.device import detect

    device = device or detect()
    return backend_for(device).telemetry(device)
