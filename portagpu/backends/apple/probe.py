"""Finds Apple-silicon GPUs through torch's MPS backend."""

from __future__ import annotations

import platform
import subprocess
import sys
from types import ModuleType

from portagpu.backends._common import loaded, optional_import
from portagpu.device import Device

BLAS = "MPS (Metal Performance Shaders)"
SIMD_WIDTH = 32  # Metal's threadExecutionWidth on every Apple GPU


def present() -> bool:
    return sys.platform == "darwin" and platform.machine() == "arm64"


def absence_reason() -> str:
    if not present():
        return "MPS needs macOS on Apple silicon"
    return "torch is missing or torch.backends.mps.is_available() is False"


def probe(force: bool = False) -> list[Device]:
    torch = loaded("torch")
    if torch is None and (force or present()):
        torch = optional_import("torch")
    if torch is None:
        return []
    return from_torch(torch)


def from_torch(torch: ModuleType) -> list[Device]:
    try:
        if not torch.backends.mps.is_available():
            return []
    except AttributeError:
        return []
    memory = None
    try:
        memory = int(torch.mps.recommended_max_memory())
    except Exception:  # noqa: BLE001 - older torch
        pass
    return [
        Device(
            vendor="apple",
            backend="mps",
            index=0,
            name=_chip_name(),
            arch=platform.machine() or None,
            warp_size=SIMD_WIDTH,
            multiprocessors=None,
            memory_total=memory,
            blas=BLAS,
            runtime_version=f"torch {torch.__version__}",
            driver_version=platform.mac_ver()[0] or None,
            source="torch",
        )
    ]


def _chip_name() -> str:
    try:
        out = subprocess.run(
            ["sysctl", "-n", "machdep.cpu.brand_string"],
            capture_output=True, text=True, timeout=2, check=False,
        )  # fmt: skip
        return out.stdout.strip() or "Apple GPU"
    except (OSError, subprocess.SubprocessError):
        return "Apple GPU"
