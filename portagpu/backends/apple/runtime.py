"""MPS (Apple) runtime hooks: compile and launch kernels, BLAS. Mixed into AppleBackend."""

from __future__ import annotations

from portagpu.backends._interpreted import InterpretedRuntime


class AppleRuntime(InterpretedRuntime):
    """Runtime half of the MPS (Apple) backend (see portagpu/runtime). Triton has no
    Metal backend: its interpreter runs kernels on host copies of the MPS tensors."""

    compile_target = "MPS (Apple)"

    def blas_library(self, framework: str) -> str:
        return "MPS" if framework == "torch" else "Accelerate"
