"""CUDA (NVIDIA) backend."""

from __future__ import annotations

from types import ModuleType

from portagpu.backends.base import Backend
from portagpu.backends.nvidia import probe, telemetry
from portagpu.backends.nvidia.runtime import NvidiaRuntime


class NvidiaBackend(NvidiaRuntime, Backend):
    name = "cuda"
    vendor = "nvidia"
    display_name = "CUDA (NVIDIA)"
    priority = 10
    device_nodes = probe.DEVICE_NODES
    probes = probe
    readings = telemetry
    dist_backend = "nccl"
    collective_library = "NCCL"
    device_per_rank = True
    visible_devices_var = "CUDA_VISIBLE_DEVICES"
    torch_device_type = "cuda"
    test_marker_help = "cuda: needs an NVIDIA GPU through CUDA; skipped elsewhere"

    def warp_size_for(self, arch: str | None) -> int | None:
        return probe.WARP_SIZE

    def serves_torch(self, torch: ModuleType | None) -> bool:
        return torch is not None and not getattr(torch.version, "hip", None)

    def serves_cupy(self, cupy: ModuleType) -> bool:
        return not getattr(cupy.cuda.runtime, "is_hip", False)


BACKEND = NvidiaBackend()
