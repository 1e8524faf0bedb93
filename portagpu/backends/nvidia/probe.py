"""Finds NVIDIA GPUs. Order: torch when it has already initialised CUDA (most
trusted, and free), else NVML (no CUDA initialisation), else torch, else CuPy."""

from __future__ import annotations

import os
from types import ModuleType

from portagpu.backends._common import (
    any_path_exists,
    cupy_device_properties,
    loaded,
    optional_import,
    text,
    torch_cuda_initialized,
)
from portagpu.backends.nvidia.nvml import call, nvml
from portagpu.device import Device
from portagpu.visibility import visible_physical

BLAS = "cuBLAS"
WARP_SIZE = 32  # every NVIDIA architecture to date; torch reports it where it can
# Device nodes whose presence hints at the NVIDIA driver (/dev/dxg: WSL) without importing anything.
DEVICE_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg")

# CUDA cores per SM by compute capability: NVML reports cores, not SMs.
_CORES_PER_SM = {
    (6, 0): 64, (6, 1): 128, (6, 2): 128, (7, 0): 64, (7, 2): 64, (7, 5): 64,
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128,
    (10, 0): 128, (10, 3): 128, (12, 0): 128, (12, 1): 128,
}  # fmt: skip


def present() -> bool:
    return any_path_exists(DEVICE_NODES) or bool(os.environ.get("CUDA_VISIBLE_DEVICES"))


def absence_reason() -> str:
    if not any_path_exists(DEVICE_NODES):
        return "no NVIDIA device node (/dev/nvidiactl) and NVML, torch and CuPy saw no GPU"
    return "an NVIDIA driver node exists but NVML, torch and CuPy reported no usable GPU"


def probe(force: bool = False) -> list[Device]:
    torch = loaded("torch")
    if torch_cuda_initialized(torch):
        found = from_torch(torch)
        if found is not None:
            return found
    if not (force or present()):
        return []
    found = from_nvml()
    if found:
        return found
    torch = torch or optional_import("torch")
    if torch is not None:
        found = from_torch(torch)
        if found:
            return found
    return from_cupy(loaded("cupy") or optional_import("cupy")) or []


def from_torch(torch: ModuleType) -> list[Device] | None:
    """None when torch cannot tell (broken build); [] when it sees no NVIDIA GPU."""
    try:
        if getattr(torch.version, "hip", None) or not getattr(torch.version, "cuda", None):
            return []  # a ROCm or CPU build of torch sees no NVIDIA GPU
        if not torch.cuda.is_available():
            return []
        count = torch.cuda.device_count()
        props = [torch.cuda.get_device_properties(i) for i in range(count)]
    except (AssertionError, RuntimeError, AttributeError):
        return None
    driver = _driver_version()
    return [
        Device(
            vendor="nvidia",
            backend="cuda",
            index=i,
            name=str(p.name),
            arch=f"sm_{p.major}{p.minor}",
            warp_size=int(getattr(p, "warp_size", WARP_SIZE)),
            multiprocessors=int(p.multi_processor_count),
            memory_total=int(p.total_memory),
            blas=BLAS,
            runtime_version=f"CUDA {torch.version.cuda}",
            driver_version=driver,
            pci_bus_id=_torch_pci_bus_id(p),
            source="torch",
        )
        for i, p in enumerate(props)
    ]


def _torch_pci_bus_id(props: object) -> str | None:
    bus = getattr(props, "pci_bus_id", None)
    if bus is None:
        return None
    domain = getattr(props, "pci_domain_id", 0)
    device = getattr(props, "pci_device_id", 0)
    return f"{domain:08X}:{bus:02X}:{device:02X}.0"


def from_nvml() -> list[Device]:
    with nvml() as pynvml:
        if pynvml is None:
            return []
        count = call(pynvml.nvmlDeviceGetCount) or 0
        # NVML numbers every GPU; CUDA (and so torch) only those CUDA_VISIBLE_DEVICES shows
        order = visible_physical("cuda", count, lambda i: _uuid(pynvml, i))
        if order is None:
            return []  # a mask NVML cannot resolve (MIG instances): ask CUDA
        driver = call(pynvml.nvmlSystemGetDriverVersion)
        cuda = call(pynvml.nvmlSystemGetCudaDriverVersion)
        devices = []
        for i in order:
            h = call(pynvml.nvmlDeviceGetHandleByIndex, i)
            if h is None:
                continue
            cc = call(pynvml.nvmlDeviceGetCudaComputeCapability, h)
            memory = call(pynvml.nvmlDeviceGetMemoryInfo, h)
            pci = call(pynvml.nvmlDeviceGetPciInfo, h)
            cores = call(getattr(pynvml, "nvmlDeviceGetNumGpuCores", None), h)
            per_sm = _CORES_PER_SM.get(tuple(cc)) if cc else None
            devices.append(
                Device(
                    vendor="nvidia",
                    backend="cuda",
                    index=len(devices),
                    name=text(call(pynvml.nvmlDeviceGetName, h) or "NVIDIA GPU"),
                    arch=f"sm_{cc[0]}{cc[1]}" if cc else None,
                    warp_size=WARP_SIZE,
                    multiprocessors=cores // per_sm if cores and per_sm else None,
                    memory_total=int(memory.total) if memory is not None else None,
                    blas=BLAS,
                    runtime_version=f"CUDA {cuda // 1000}.{cuda % 1000 // 10} (driver API)"
                    if cuda
                    else None,
                    driver_version=text(driver) if driver else None,
                    pci_bus_id=text(pci.busId) if pci is not None else None,
                    source="nvml",
                )
            )
        return devices


def _uuid(pynvml: ModuleType, index: int) -> str | None:
    h = call(pynvml.nvmlDeviceGetHandleByIndex, index)
    found = call(pynvml.nvmlDeviceGetUUID, h) if h is not None else None
    return text(found) if found else None


def from_cupy(cupy: ModuleType | None) -> list[Device] | None:
    found = cupy_device_properties(cupy, hip=False)
    if found is None:
        return None
    props, version = found
    return [
        Device(
            vendor="nvidia",
            backend="cuda",
            index=i,
            name=text(p["name"]),
            arch=f"sm_{p['major']}{p['minor']}",
            warp_size=int(p.get("warpSize", WARP_SIZE)),
            multiprocessors=int(p["multiProcessorCount"]),
            memory_total=int(p["totalGlobalMem"]),
            blas=BLAS,
            runtime_version=f"CUDA {version // 1000}.{version % 1000 // 10}",
            driver_version=_driver_version(),
            pci_bus_id=None,
            source="cupy",
        )
        for i, p in enumerate(props)
    ]


def _driver_version() -> str | None:
    with nvml() as pynvml:
        return text(call(pynvml.nvmlSystemGetDriverVersion)) if pynvml else None
