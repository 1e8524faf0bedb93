"""AMD readings through amdsmi: VRAM comes in MB, power in W (current_socket_power
on MI300 and later, average_socket_power before), unsupported values as "N/A"."""

from __future__ import annotations

from typing import Any

from portagpu.backends._common import number
from portagpu.backends.amd.amdsmi_session import amdsmi, call, hip_ordered_handles, visible_handles
from portagpu.device import Device
from portagpu.readings import Telemetry

MB = 1024 * 1024


def read(device: Device) -> Telemetry:
    with amdsmi() as lib:
        if lib is None:
            return Telemetry(source="unavailable: amdsmi or libamd_smi.so is missing")
        handles = visible_handles(lib) or hip_ordered_handles(lib)
        if device.index >= len(handles):
            return Telemetry(source=f"unavailable: amdsmi has no device for HIP {device.index}")
        h = handles[device.index]
        vram = call(lib.amdsmi_get_gpu_vram_usage, h) or {}
        activity = call(lib.amdsmi_get_gpu_activity, h) or {}
        power = call(lib.amdsmi_get_power_info, h) or {}
        used, total = number(vram.get("vram_used")), number(vram.get("vram_total"))
        return Telemetry(
            memory_used=int(used * MB) if used is not None else None,
            memory_total=int(total * MB) if total is not None else None,
            utilization=number(activity.get("gfx_activity")),
            temperature=_temperature(lib, h),
            power=_power_watts(power),
            source="amdsmi",
        )


def _power_watts(info: dict[str, Any]) -> float | None:
    for key in ("current_socket_power", "average_socket_power", "socket_power"):
        watts = number(info.get(key))
        if watts is not None:
            return watts
    return None


def _temperature(lib: Any, h: Any) -> float | None:
    kinds = getattr(lib, "AmdSmiTemperatureType", None)
    metric = getattr(lib, "AmdSmiTemperatureMetric", None)
    if kinds is None or metric is None:
        return None
    for name in ("HOTSPOT", "EDGE", "JUNCTION"):
        kind = getattr(kinds, name, None)
        if kind is not None:
            value = number(call(lib.amdsmi_get_temp_metric, h, kind, metric.CURRENT))
            if value is not None:
                return value
    return None
