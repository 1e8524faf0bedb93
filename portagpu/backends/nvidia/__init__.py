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
    dist_backend = "nccl"
    collective_library = "NCCL"
    device_per_rank = True
    visible_devices_var = "CUDA_VISIBLE_DEVICES"


BACKEND = NvidiaBackend()
