"""Portable kernels (installed as portagpu.kernels), torch-like:

    add(x, y)                  sum(x[, dim])             max(x[, dim])
    softmax(x, dim=-1)         layer_norm(x, normalized_shape, weight, bias, eps)
    histogram(x, bins)         cumsum(x, dim=-1)         matmul_bias_act(a, b, bias, act)
    matmul(a, b)               (the vendor BLAS, through portagpu.matmul)

Each call picks its implementation for the tensor's device: a Triton kernel, a
CUDA C kernel (kernels/cuda/*.cu, written once for 32- and 64-lane warps) or
the torch reference, from kernels/tuning.yaml, with block sizes and warps per
vendor and size. `impl=` (or PORTAGPU_KERNELS_IMPL) asks for one;
`last_impl()` says which ran. Importing this package imports no torch/triton.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "add": "elementwise",
    "sum": "reduction",
    "max": "reduction",
    "softmax": "softmax",
    "layer_norm": "layer_norm",
    "histogram": "histogram",
    "cumsum": "scan",
    "matmul": "matmul",
    "matmul_bias_act": "matmul",
    "last_impl": "_dispatch",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"portagpu.kernels.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'portagpu.kernels' has no attribute {name!r}")
