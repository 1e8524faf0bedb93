"""ROCm (AMD) backend."""

from __future__ import annotations

from portagpu.backends.amd import probe, telemetry
from portagpu.backends.amd.runtime import AmdRuntime
from portagpu.backends.base import Backend


class AmdBackend(AmdRuntime, Backend):
    name = "rocm"
    vendor = "amd"
    display_name = "ROCm (AMD)"
    probes = probe
    readings = telemetry


BACKEND = AmdBackend()
