"""CPU backend."""

from __future__ import annotations

from portagpu.backends.base import Backend
from portagpu.backends.cpu import probe, telemetry
from portagpu.backends.cpu.runtime import CpuRuntime


class CpuBackend(CpuRuntime, Backend):
    name = "cpu"
    vendor = "cpu"
    display_name = "CPU"
    priority = 1000  # always present: the fallback, probed last
    is_gpu = False
    probes = probe
    readings = telemetry
    dist_backend = "gloo"
    collective_library = "Gloo"
    torch_device_type = "cpu"
    torch_device_indexed = False
    test_marker = "cpu_only"
    test_marker_help = "cpu_only: runs only when portagpu's device is the CPU; skipped on GPUs"


BACKEND = CpuBackend()
