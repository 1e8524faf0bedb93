"""ROCm (AMD) runtime hooks: compile and launch kernels, BLAS. Mixed into AmdBackend."""

from __future__ import annotations

import shutil
from typing import Any

from portagpu.errors import LaunchError


class AmdRuntime:
    """Runtime half of the ROCm (AMD) backend (see portagpu/runtime)."""

    triton_options = frozenset({"waves_per_eu", "matrix_instr_nonkdim", "kpack"})
    triton_interpreted = False
    # The AMD backend adds its own argument specialisations (buffer ops, ...)
    # that portagpu's cache key does not model: keep Triton's own dispatch.
    triton_fast_path = False

    def cuda_compiler(self) -> str | None:
        return "hipify_bridge + CuPy RawModule (hiprtc)"

    def compile_cuda(self, source: str, *, options: tuple[str, ...], device) -> Any:
        from portagpu.runtime.cuda_source import cupy_raw_module

        if shutil.which("hipcc") is None:
            raise LaunchError(
                "CuPy on ROCm needs `hipcc` on PATH to find HIP headers at run time; "
                "add /opt/rocm/bin to PATH"
            )
        try:
            from portagpu.hipify_bridge import translate
        except ImportError as exc:
            raise LaunchError(f"CUDA source on AMD needs portagpu.hipify_bridge.translate ({exc})") from None
        translation = translate(source, warp_size=device.warp_size)
        return cupy_raw_module(translation.text, options=options, device=device, want_hip=True)

    def blas_library(self, framework: str) -> str:
        if framework == "torch":
            import torch

            preferred = str(torch.backends.cuda.preferred_blas_library()).lower()
            return "hipBLASLt" if "lt" in preferred else "rocBLAS"
        return "rocBLAS (hipBLAS)"
