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
    dist_backend = "nccl"  # PyTorch's ROCm build serves "nccl" with RCCL
    collective_library = "RCCL"
    device_per_rank = True
    # HIP reads CUDA_VISIBLE_DEVICES as HIP_VISIBLE_DEVICES; ROCR_VISIBLE_DEVICES
    # filters first, in the ROCm runtime, and HIP indices count within its list
    visible_devices_var = "HIP_VISIBLE_DEVICES"
    visible_devices_aliases = ("CUDA_VISIBLE_DEVICES",)
    visible_devices_outer = ("ROCR_VISIBLE_DEVICES",)


BACKEND = AmdBackend()
