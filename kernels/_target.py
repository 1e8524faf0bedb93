"""Which device a tensor lives on, in the terms the kernels need.

GPU facts come from `portagpu.detect()` (the device layer); if it cannot answer,
torch's own properties are used so a kernel never fails for want of a probe.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Target:
    vendor: str  # nvidia | amd | apple | cpu
    backend: str  # cuda | rocm | mps | cpu
    name: str
    warp_size: int | None
    multiprocessors: int | None

    @property
    def is_gpu(self) -> bool:
        return self.backend != "cpu"


CPU = Target("cpu", "cpu", "cpu", None, os.cpu_count())


def target_of(tensor: Any) -> Target:
    kind = tensor.device.type
    if kind == "cpu":
        return CPU
    if kind == "mps":
        return Target("apple", "mps", "mps", 32, None)
    if kind == "cuda":
        index = tensor.device.index
        return _gpu_target(0 if index is None else index)
    return Target("cpu", kind, kind, None, None)  # other torch backends: reference only


@cache
def _gpu_target(index: int) -> Target:
    try:
        import portagpu

        for device in portagpu.devices():
            if device.backend in ("cuda", "rocm") and device.index == index:
                return Target(device.vendor, device.backend, device.name,
                              device.warp_size, device.multiprocessors)
    except Exception:  # noqa: BLE001 - a broken probe must not stop the kernel
        pass
    import torch

    props = torch.cuda.get_device_properties(index)  # noqa: PG101 - only called for a cuda/rocm device
    amd = bool(getattr(torch.version, "hip", None))
    return Target("amd" if amd else "nvidia", "rocm" if amd else "cuda", props.name,
                  getattr(props, "warp_size", 64 if amd else 32), props.multi_processor_count)
