"""CPU runtime hooks: compile and launch kernels, BLAS. Mixed into CpuBackend."""

from __future__ import annotations

from portagpu.backends._interpreted import InterpretedRuntime


class CpuRuntime(InterpretedRuntime):
    """Runtime half of the CPU backend (see portagpu/runtime): Triton's interpreter
    runs kernels on CPU tensors."""

    compile_target = "the CPU"

    def blas_library(self, framework: str) -> str:
        if framework == "torch":
            import torch

            return "CPU BLAS (MKL)" if torch.backends.mkl.is_available() else "CPU BLAS (OpenBLAS)"
        return "CPU BLAS (numpy)"
