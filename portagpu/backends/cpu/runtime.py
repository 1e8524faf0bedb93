"""CPU runtime hooks: compile and launch kernels, BLAS. Mixed into CpuBackend."""

from __future__ import annotations

from typing import Any

from portagpu.errors import LaunchError


class CpuRuntime:
    """Runtime half of the CPU backend (see portagpu/runtime)."""

    triton_options: frozenset[str] = frozenset()
    # Triton's interpreter runs kernels on CPU tensors
    triton_mode = "interpreted"
    triton_fast_path = False

    def cuda_compiler(self) -> str | None:
        return None

    def compile_cuda(self, source: str, *, options: tuple[str, ...], device) -> Any:
        raise LaunchError("CUDA C source cannot be compiled for the CPU")

    def blas_library(self, framework: str) -> str:
        if framework == "torch":
            import torch

            return "CPU BLAS (MKL)" if torch.backends.mkl.is_available() else "CPU BLAS (OpenBLAS)"
        return "CPU BLAS (numpy)"
