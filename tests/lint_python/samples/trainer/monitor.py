"""GPU monitoring with NVIDIA tools only (lint sample)."""

import subprocess

import pynvml as nv  # expect: PG201


def memory_used_mib(index: int = 0) -> float:
    nv.nvmlInit()
    handle = nv.nvmlDeviceGetHandleByIndex(index)
    return nv.nvmlDeviceGetMemoryInfo(handle).used / 2**20


def topology() -> str:
    return subprocess.check_output(["nvidia-smi", "topo", "-m"], text=True)  # expect: PG202


def topology_or_none() -> str | None:
    # handled failure, but on an AMD machine this says "no GPUs": still no AMD path
    try:
        return subprocess.check_output(["nvidia-smi", "topo", "-m"], text=True)  # expect: PG202
    except (OSError, subprocess.CalledProcessError):
        return None
