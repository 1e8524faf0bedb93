"""The CUDA C kernels in kernels/cuda/*.cu, compiled and launched by the runtime.

Sources are package data. NVRTC/hiprtc compile one string, so the local
`#include "warp.cuh"` is inlined here. `portagpu.CudaModule` compiles each file
once per device (hipified for AMD, with WARP_SIZE/PORTAGPU_WARP_SIZE defined
from the device) and converts scalars to the C types of the kernel signature.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

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


@cache
def module(file: str) -> Any:
    import portagpu

    return portagpu.CudaModule(source(file), options=("--std=c++17",))


def launch(file: str, name: str, grid: tuple[int, ...], block: int, *args: Any, shared_mem: int = 0) -> None:
    """Run kernel `name` of kernels/cuda/<file> on `grid` blocks of `block` threads,
    with `shared_mem` bytes of dynamic shared memory per block."""
    import portagpu

    if shared_mem:
        portagpu.launch(module(file)[name], grid, *args, block=(block,), shared_mem=shared_mem)
    else:
        portagpu.launch(module(file)[name], grid, *args, block=(block,))
