"""CUDA C syntax: tree-sitter parsing (parser, unit), CUDA sources embedded in
Python strings (pystrings, embedded), kernel signatures, and the warp
constructs hipify rewrites (warp/). Lint's CUDA rules live in portagpu.lint.cuda;
nothing here imports lint.

Nothing heavy is imported here; tree_sitter loads on the first parse.
"""

from __future__ import annotations

from portagpu.cuda.signature import KernelNotFoundError, Param, kernel_signature, scalar_dtype

__all__ = ["KernelNotFoundError", "Param", "kernel_signature", "scalar_dtype"]
