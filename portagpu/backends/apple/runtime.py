"""MPS (Apple) runtime hooks: compile and launch kernels, BLAS. Mixed into AppleBackend."""

from __future__ import annotations

from typing import Any

from portagpu.errors import LaunchError


class AppleRuntime:
    """Runtime half of the MPS (Apple) backend (see portagpu/runtime)."""

    triton_options: frozenset[str] = frozenset()
    # Triton has no Metal backend: its interpreter runs
    # kernels on host copies of the MPS tensors
    triton_mode = "interpreted"
    triton_fast_path = False

    def cuda_compiler(self) -> str | None:
        return None

    def compile_cuda(self, source: str, *, options: tuple[str, ...], device) -> Any:
        raise LaunchError("CUDA C source cannot be compiled for MPS (Apple)")

    def blas_library(self, framework: str) -> str:
        return "MPS" if framework == "torch" else "Accelerate"
