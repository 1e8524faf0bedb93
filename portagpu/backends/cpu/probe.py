"""The CPU device: always present, the fallback when no GPU is found."""

from __future__ import annotations

import os
import platform

from portagpu.backends._common import loaded, optional_import
from portagpu.device import Device


def present() -> bool:
    return True


def absence_reason() -> str:  # pragma: no cover - the CPU is always there
    return ""


def probe(force: bool = False) -> list[Device]:
    torch = loaded("torch") or optional_import("torch")
    return [
        Device(
            vendor="cpu",
            backend="cpu",
            index=0,
            name=cpu_name(),
            arch=platform.machine() or None,
            warp_size=None,
            multiprocessors=os.cpu_count(),
            memory_total=_physical_memory(),
            blas=cpu_blas(torch),
            runtime_version=f"torch {torch.__version__}" if torch is not None else None,
            driver_version=None,
            source="os",
        )
    ]


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def cpu_blas(torch: object | None) -> str:
    """The BLAS that torch (the CPU runtime's matmul) was built with."""
    if torch is None:
        return "none (install torch for CPU BLAS)"
    try:
        config = torch.__config__.show()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001
        return "CPU BLAS (torch)"
    for line in config.splitlines():
        if "BLAS_INFO=" in line:
            name = line.split("BLAS_INFO=", 1)[1].split(",")[0].strip()
            return {"mkl": "MKL", "open": "OpenBLAS", "accelerate": "Accelerate"}.get(name, name)
    return "CPU BLAS (torch)"


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
