"""CPU backend."""

from __future__ import annotations

from portagpu.backends.base import Backend
from portagpu.backends.cpu import probe, telemetry
from portagpu.backends.cpu.runtime import CpuRuntime


class CpuBackend(CpuRuntime, Backend):
    name = "cpu"
    vendor = "cpu"
    display_name = "CPU"
    probes = probe
    readings = telemetry
    dist_backend = "gloo"
    collective_library = "Gloo"


BACKEND = CpuBackend()
