"""Finds AMD GPUs. Order: torch when it has already initialised HIP, else amdsmi
(no HIP initialisation), else torch, else CuPy (ROCm build)."""

from __future__ import annotations

from types import ModuleType

from portagpu.backends._common import (
    any_path_exists,
    cupy_device_properties,
    loaded,
    optional_import,
    text,
    torch_cuda_initialized,
)
from portagpu.backends.amd.amdsmi_session import amdsmi, call, visible_handles
from portagpu.device import Device

BLAS = "rocBLAS/hipBLASLt"
DEVICE_NODES = ("/dev/kfd",)  # the ROCm kernel driver


def gfx_arch(name: str | None) -> str | None:
    """'gfx942:sramecc+:xnack-' -> 'gfx942' (feature flags dropped)."""
    if not name:
        return None
    arch = text(name).strip().split(":")[0]
    return arch if arch.startswith("gfx") else None


def wave_size_for_arch(arch: str | None) -> int | None:
    """CDNA and GCN (gfx8xx, gfx9xx) run 64-wide wavefronts; RDNA (gfx10+) 32-wide,
    HIP's default there. Used only when the stack does not report the figure."""
    if not arch or not arch.startswith("gfx"):
        return None
    digits = arch[3:]
    major = int(digits[:-2]) if len(digits) > 2 and digits[:-2].isdigit() else None
    if major is None:
        return None
    return 64 if major < 10 else 32


def present() -> bool:
    return any_path_exists(DEVICE_NODES)


def absence_reason() -> str:
    if not present():
        return "no ROCm kernel driver (/dev/kfd) and amdsmi, torch and CuPy saw no AMD GPU"
    return "/dev/kfd exists but amdsmi, torch and CuPy reported no usable AMD GPU"


def probe(force: bool = False) -> list[Device]:
    torch = loaded("torch")
    if torch_cuda_initialized(torch):
        found = from_torch(torch)
        if found is not None:
            return found
    if not (force or present() or _fake_or_loaded_stack()):
        return []
    found = from_amdsmi()
    if found:
        return found
    torch = torch or optional_import("torch")
    if torch is not None:
        found = from_torch(torch)
        if found:
            return found
    return from_cupy(loaded("cupy") or optional_import("cupy")) or []


def _fake_or_loaded_stack() -> bool:
    """A ROCm torch already imported (or a test's stand-in) counts as a hint."""
    torch = loaded("torch")
    return bool(torch is not None and getattr(getattr(torch, "version", None), "hip", None))


def from_torch(torch: ModuleType) -> list[Device] | None:
    try:
        hip = getattr(torch.version, "hip", None)
        if not hip:
            return []  # a CUDA or CPU build of torch sees no AMD GPU
        if not torch.cuda.is_available():
            return []
        props = [torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count())]
    except (AssertionError, RuntimeError, AttributeError):
        return None
    devices = []
    for i, p in enumerate(props):
        arch = gfx_arch(getattr(p, "gcnArchName", None))
        devices.append(
            Device(
                vendor="amd",
                backend="rocm",
                index=i,
                name=str(p.name),
                arch=arch,
                warp_size=int(getattr(p, "warp_size", 0) or 0) or wave_size_for_arch(arch),
                multiprocessors=int(p.multi_processor_count),
                memory_total=int(p.total_memory),
                blas=BLAS,
                runtime_version=f"HIP {hip}",
                driver_version=None,
                pci_bus_id=None,
                source="torch",
            )
        )
    return devices


def from_amdsmi() -> list[Device]:
    with amdsmi() as lib:
        if lib is None:
            return []
        handles = visible_handles(lib)
        if handles is None:
            return []  # a mask amdsmi cannot resolve (UUIDs): ask HIP
        devices = []
        for i, h in enumerate(handles):
            asic = call(lib.amdsmi_get_gpu_asic_info, h) or {}
            vram = call(lib.amdsmi_get_gpu_vram_info, h) or {}
            driver = call(lib.amdsmi_get_gpu_driver_info, h) or {}
            arch = gfx_arch(asic.get("target_graphics_version"))
            vram_mb = vram.get("vram_size")
            units = asic.get("num_compute_units")
            devices.append(
                Device(
                    vendor="amd",
                    backend="rocm",
                    index=i,
                    name=text(asic.get("market_name") or "AMD GPU"),
                    arch=arch,
                    warp_size=wave_size_for_arch(arch),  # amdsmi does not report it
                    multiprocessors=int(units) if isinstance(units, int) else None,
                    memory_total=int(vram_mb) * 1024 * 1024  # amdsmi: MB
                    if isinstance(vram_mb, int)
                    else None,
                    blas=BLAS,
                    runtime_version=None,
                    driver_version=text(driver.get("driver_version"))
                    if driver.get("driver_version")
                    else None,
                    pci_bus_id=text(call(lib.amdsmi_get_gpu_device_bdf, h) or "") or None,
                    source="amdsmi",
                )
            )
        return devices


def from_cupy(cupy: ModuleType | None) -> list[Device] | None:
    found = cupy_device_properties(cupy, hip=True)
    if found is None:
        return None
    props, version = found
    devices = []
    for i, p in enumerate(props):
        arch = gfx_arch(text(p.get("gcnArchName", b"")))
        devices.append(
            Device(
                vendor="amd",
                backend="rocm",
                index=i,
                name=text(p["name"]),
                arch=arch,
                warp_size=int(p.get("warpSize") or 0) or wave_size_for_arch(arch),
                multiprocessors=int(p["multiProcessorCount"]),
                memory_total=int(p["totalGlobalMem"]),
                blas=BLAS,
                runtime_version=f"HIP {version}",
                driver_version=None,
                pci_bus_id=None,
                source="cupy",
            )
        )
    return devices
