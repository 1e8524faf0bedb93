"""Prove that GPU kernels compile and fit on AMD and NVIDIA targets, with no GPU.

    import portagpu.kernelcheck as kc

    @kc.signature(x="*fp32", y="*fp32", out="*fp32", n="i32", BLOCK=1024, num_warps=4)
    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr): ...

    report = kc.check_kernels([add_kernel], targets="gfx942,gfx1100,sm_90")
    print(kc.format_table(report))

Triton kernels compile with Triton's own AMD and NVIDIA backends (in a worker
process), CUDA C kernels through hipify + hipcc and nvcc. Where users meet it:
`pytest --portagpu-compile-for gfx942,gfx1100`, `portagpu check-kernels FILE
--target gfx942`, and docs/kernelcheck.md. Importing this package imports no
compiler; `signature` is a no-op at run time.
"""

from __future__ import annotations

import importlib
from typing import Any

from portagpu.kernelcheck.declare import signature

__all__ = [
    "signature",
    "check_kernels",
    "check_specs",
    "resolve",
    "parse_targets",
    "Target",
    "Report",
    "Check",
    "format_table",
    "format_json",
    "format_sarif",
    "Recorder",
    "DEFAULT_TARGETS",
    "CompileCache",
]

_LAZY = {
    "check_kernels": "portagpu.kernelcheck.discover",
    "check_specs": "portagpu.kernelcheck.check",
    "resolve": "portagpu.kernelcheck.targets",
    "parse_targets": "portagpu.kernelcheck.targets",
    "Target": "portagpu.kernelcheck.targets",
    "DEFAULT_TARGETS": "portagpu.kernelcheck.targets",
    "Report": "portagpu.kernelcheck.report",
    "format_table": "portagpu.kernelcheck.report",
    "format_json": "portagpu.kernelcheck.report",
    "format_sarif": "portagpu.kernelcheck.report",
    "Check": "portagpu.kernelcheck.verdict",
    "Recorder": "portagpu.kernelcheck.record",
    "CompileCache": "portagpu.kernelcheck.cache",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'portagpu.kernelcheck' has no attribute {name!r}")
