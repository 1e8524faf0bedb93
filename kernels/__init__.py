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

# The family modules import torch and triton only inside their functions, so
# importing them here is cheap, and binding the functions now keeps a submodule
# (portagpu.kernels.softmax, ...) from shadowing the function of the same name.
from portagpu.kernels._dispatch import last_impl
from portagpu.kernels.elementwise import add
from portagpu.kernels.histogram import histogram
from portagpu.kernels.layer_norm import layer_norm
from portagpu.kernels.matmul import matmul, matmul_bias_act
from portagpu.kernels.reduction import max, sum  # noqa: A004 - torch-like names
from portagpu.kernels.scan import cumsum
from portagpu.kernels.softmax import softmax

__all__ = ["add", "sum", "max", "softmax", "layer_norm", "histogram", "cumsum", "matmul",
           "matmul_bias_act", "last_impl"]
