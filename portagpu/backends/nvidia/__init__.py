"""CUDA (NVIDIA) backend."""

from __future__ import annotations

from portagpu.backends.base import Backend
from portagpu.backends.nvidia import probe, telemetry
from portagpu.backends.nvidia.runtime import NvidiaRuntime


class NvidiaBackend(NvidiaRuntime, Backend):
    name = "cuda"
    vendor = "nvidia"
    display_name = "CUDA (NVIDIA)"
    probes = probe
    readings = telemetry


BACKEND = NvidiaBackend()
