"""NVIDIA readings through NVML, converted to bytes, %, degrees C and W."""

from __future__ import annotations

from portagpu.backends._common import number
from portagpu.backends.nvidia.nvml import call, handle, nvml
from portagpu.device import Device
from portagpu.readings import Telemetry


def read(device: Device) -> Telemetry:
    with nvml() as pynvml:
        if pynvml is None:
            return Telemetry(source="unavailable: nvidia-ml-py or the NVIDIA driver is missing")
        h = handle(pynvml, device.index, device.pci_bus_id)
        if h is None:
            return Telemetry(source=f"unavailable: NVML has no device {device.index}")
        memory = call(pynvml.nvmlDeviceGetMemoryInfo, h)
        rates = call(pynvml.nvmlDeviceGetUtilizationRates, h)
        temp = call(pynvml.nvmlDeviceGetTemperature, h, pynvml.NVML_TEMPERATURE_GPU)
        milliwatts = number(call(pynvml.nvmlDeviceGetPowerUsage, h))
        return Telemetry(
            memory_used=int(memory.used) if memory is not None else None,
            memory_total=int(memory.total) if memory is not None else None,
            utilization=number(rates.gpu) if rates is not None else None,
            temperature=number(temp),
            power=milliwatts / 1000.0 if milliwatts is not None else None,  # NVML: mW
            source="nvml",
        )
