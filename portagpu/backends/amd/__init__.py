"""ROCm (AMD) backend."""

from __future__ import annotations

from types import ModuleType

from portagpu.backends.amd import probe, telemetry
from portagpu.backends.amd.runtime import AmdRuntime
from portagpu.backends.base import Backend


class AmdBackend(AmdRuntime, Backend):
    name = "rocm"
    vendor = "amd"
    display_name = "ROCm (AMD)"
    priority = 20
    device_nodes = probe.DEVICE_NODES
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
    torch_device_type = "cuda"  # PyTorch's ROCm build keeps the "cuda" device type
    test_marker_help = "rocm: needs an AMD GPU through ROCm/HIP; skipped elsewhere"

    def warp_size_for(self, arch: str | None) -> int | None:
        return probe.wave_size_for_arch(arch)

    def serves_torch(self, torch: ModuleType | None) -> bool:
        return torch is not None and bool(getattr(torch.version, "hip", None))

    def serves_cupy(self, cupy: ModuleType) -> bool:
        return bool(getattr(cupy.cuda.runtime, "is_hip", False))


BACKEND = AmdBackend()
