"""CUDA C analysis: tree-sitter parsing, kernel signatures, warp/library checks
for .cu/.cuh files and for CUDA sources embedded in Python.

Nothing heavy is imported here; tree_sitter loads on the first parse.
"""

from __future__ import annotations

from portagpu.cuda.signature import KernelNotFoundError, Param, kernel_signature, scalar_dtype

__all__ = [
    "KernelNotFoundError",
    "Param",
    "check_cuda_file",
    "check_embedded",
    "kernel_signature",
    "scalar_dtype",
]


def __getattr__(name: str):
    if name == "check_cuda_file":
        from portagpu.cuda.analysis import check_cuda_file

        return check_cuda_file
    if name == "check_embedded":
        from portagpu.cuda.embedded import check_embedded

        return check_embedded
    raise AttributeError(f"module 'portagpu.cuda' has no attribute {name!r}")
