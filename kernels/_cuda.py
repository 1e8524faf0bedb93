"""The CUDA C kernels in kernels/cuda/*.cu: load, compile once, launch.

Sources are package data. NVRTC/hiprtc compile one string, so the local
`#include "warp.cuh"` is inlined here. Compilation goes through
`portagpu.CudaKernel` (hipified for AMD there); without the runtime, CuPy
compiles them directly on NVIDIA.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

from portagpu.kernels._target import Target

CUDA_DIR = "cuda"
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s+"([\w.]+)"\s*$', re.MULTILINE)


@cache
def source(file: str) -> str:
    """The text of kernels/cuda/<file> with its local includes inlined (once each)."""
    seen: set[str] = set()

    def expand(name: str) -> str:
        if name in seen:
            return ""
        seen.add(name)
        text = (resources.files("portagpu.kernels") / CUDA_DIR / name).read_text(encoding="utf-8")
        return _LOCAL_INCLUDE.sub(lambda m: expand(m.group(1)), text)

    return expand(file)


# C types of each kernel's scalar parameters, for the CuPy path (pointers are data_ptr()).
_SCALARS = {"long long": "int64", "int": "int32", "float": "float32"}


@cache
def _compiled(file: str, name: str, warp_size: int | None) -> Any:
    options = (f"-DPORTAGPU_WARP_SIZE={warp_size}",) if warp_size else ()
    try:
        from portagpu.runtime import CudaKernel
    except (ImportError, AttributeError):
        CudaKernel = None  # noqa: N806
    if CudaKernel is not None:
        return ("portagpu", CudaKernel(source(file), name, options=options))
    import cupy

    return ("cupy", cupy.RawKernel(source(file), name, options=("--std=c++17", *options)))


def launch(file: str, name: str, grid: tuple[int, ...], block: int, args: tuple[Any, ...],
           signature: tuple[str, ...], target: Target) -> None:
    """Run kernel `name` of kernels/cuda/<file>. `signature` gives each parameter's C type
    ("ptr" for pointers) so that scalars reach the kernel at the right width."""
    kind, kernel = _compiled(file, name, target.warp_size)
    if kind == "portagpu":
        from portagpu.runtime import launch as runtime_launch

        runtime_launch(kernel, grid, *args, block=(block,))
        return
    import numpy as np

    converted = [a.data_ptr() if c == "ptr" else getattr(np, _SCALARS[c])(a)
                 for a, c in zip(args, signature, strict=True)]
    converted = [np.uint64(a) if c == "ptr" else a for a, c in zip(converted, signature, strict=True)]
    kernel(grid, (block,), tuple(converted))
