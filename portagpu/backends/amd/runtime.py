"""ROCm (AMD) runtime hooks: compile and launch kernels, BLAS. Mixed into AmdBackend."""

from __future__ import annotations

import shutil
from typing import Any

from portagpu.backends._cupy import cupy_raw_module
from portagpu.errors import LaunchError


class AmdRuntime:
    """Runtime half of the ROCm (AMD) backend (see portagpu/runtime)."""

    triton_mode = "native"
    triton_options = frozenset({"waves_per_eu", "matrix_instr_nonkdim", "kpack"})
    # The AMD backend adds its own argument specialisations (buffer ops, ...)
    # that portagpu's cache key does not model: keep Triton's own dispatch.
    triton_fast_path = False

    def cuda_compiler(self) -> str | None:
        return "hipify_bridge + CuPy RawModule (hiprtc)"

    def compile_cuda(self, source: str, *, options: tuple[str, ...], device) -> Any:
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
        warp = device.warp_size or self.warp_size_for(device.arch) or 64
        return cupy_raw_module(translation.text, options=options, device=device, hip=True,
                               package="cupy-rocm-6-0", warp_size=warp)

    def blas_library(self, framework: str) -> str:
        if framework == "torch":
            import torch

            preferred = str(torch.backends.cuda.preferred_blas_library()).lower()
            return "hipBLASLt" if "lt" in preferred else "rocBLAS"
        return "rocBLAS (hipBLAS)"
