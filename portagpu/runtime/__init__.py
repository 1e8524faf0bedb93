"""The runtime face of portagpu: `launch`, `CudaKernel`, `CudaModule`,
`matmul`, `last_backend`.

Importing this package is cheap and sets nothing; torch, cupy and triton load
on the first call that needs them.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "launch": "portagpu.runtime.dispatch",
    "reference_for": "portagpu.runtime.dispatch",
    "CudaKernel": "portagpu.runtime.cuda_source",
    "CudaModule": "portagpu.runtime.cuda_source",
    "matmul": "portagpu.runtime.blas",
    "last_backend": "portagpu.runtime.blas",
    "BlasCall": "portagpu.runtime.blas",
    "native_num_warps": "portagpu.runtime.triton_launch",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'portagpu.runtime' has no attribute {name!r}")
