"""CUDA (NVIDIA) runtime hooks: compile and launch kernels, BLAS. Mixed into NvidiaBackend."""

from __future__ import annotations

from typing import Any


class NvidiaRuntime:
    """Runtime half of the CUDA (NVIDIA) backend (see portagpu/runtime)."""

    triton_options = frozenset({"maxnreg"})
    triton_interpreted = False
    # Triton's NVIDIA specialisation (dtype, 16-byte alignment, int range, ==1)
    # is what portagpu's fast-path key covers; measured in benchmarks/launch_overhead.py.
    triton_fast_path = True

    def cuda_compiler(self) -> str | None:
        return "CuPy RawModule (NVRTC)"

    def compile_cuda(self, source: str, *, options: tuple[str, ...], device) -> Any:
        from portagpu.runtime.cuda_source import cupy_raw_module

        return cupy_raw_module(source, options=options, device=device, want_hip=False)

    def blas_library(self, framework: str) -> str:
        if framework == "torch":
            import torch

            preferred = str(torch.backends.cuda.preferred_blas_library()).lower()
            return "cuBLASLt" if "lt" in preferred else "cuBLAS"
        return "cuBLAS"
