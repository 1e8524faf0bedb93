"""CPU readings from /proc (Linux); other fields stay None."""

from __future__ import annotations

import os

from portagpu.device import Device
from portagpu.readings import Telemetry


def read(device: Device) -> Telemetry:
    total = available = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        total = int(fields["MemTotal"].split()[0]) * 1024
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        pass
    utilization = None
    try:
        utilization = min(100.0, 100.0 * os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:
        pass
    return Telemetry(
        memory_used=total - available if total is not None and available is not None else None,
        memory_total=total or device.memory_total,
        utilization=utilization,
        source="/proc" if total else "os",
    )
