"""`@portagpu.kernelcheck.signature(...)`: state a specialisation for the checker.

    @signature(a="*fp16", b="*fp16", c="*fp16", M="i32", N="i32", K="i32", BLOCK_M=128, num_warps=8)
    @triton.jit
    def matmul(a, b, c, M, N, K, BLOCK_M: tl.constexpr): ...

Keyword arguments: a Triton type string ("*fp16", "*bf16", "i32", "i64", "fp32",
"u1") or a Python value for each runtime parameter (a value also feeds
`triton.heuristics`); a value for each constexpr (autotuned kernels take theirs
from their configs); launch options (num_warps, num_stages, waves_per_eu, ...).
Stack it to declare several. At run time it does nothing: it returns the kernel
object itself with the declaration attached, so launches are unchanged.
The same keys work in pyproject.toml:

    [tool.portagpu.kernels."src/ops.py:matmul"]
    a = "*fp16"
    ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

ATTRIBUTE = "__portagpu_signatures__"
K = TypeVar("K")


def signature(**values: Any) -> Callable[[K], K]:
    """Declare one specialisation of the decorated Triton kernel for `portagpu check-kernels`."""

    def attach(kernel: K) -> K:
        declared = list(getattr(kernel, ATTRIBUTE, ()))
        declared.insert(0, dict(values))  # decorators apply bottom-up: keep source order
        setattr(kernel, ATTRIBUTE, declared)
        return kernel

    return attach


def declarations(kernel: Any) -> list[dict[str, Any]]:
    return list(getattr(kernel, ATTRIBUTE, ()))
