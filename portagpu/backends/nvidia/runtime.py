"""CUDA (NVIDIA) runtime hooks: compile and launch kernels, BLAS. Mixed into NvidiaBackend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from portagpu.backends._cupy import cupy_raw_module
from portagpu.backends.base import DeviceSwitch


class NvidiaRuntime:
    """Runtime half of the CUDA (NVIDIA) backend (see portagpu/runtime)."""

    triton_mode = "native"
    triton_options = frozenset({"maxnreg"})
    # Triton's NVIDIA specialisation (dtype, 16-byte alignment, int range, ==1)
    # is what portagpu's fast-path key covers; measured in benchmarks/launch_overhead.py.
    triton_fast_path = True
    # repeated launches of Triton 3.6 kernels go straight to the driver (runtime/driver_launch.py)
    driver_launch_names = ("libcuda.so.1", "cuLaunchKernel", "cuCtxGetCurrent", "cuGetErrorString")

    def triton_fast_path_hooks(self) -> tuple[Callable[[], int], Callable[[int], int]]:
        import torch

        # CUDA is initialised by then (a kernel was launched through Triton)
        return torch._C._cuda_getDevice, torch._C._cuda_getCurrentRawStream

    def device_switch_hooks(self) -> DeviceSwitch | None:
        import torch

        # torch.cuda.device's own calls, without its Python wrappers (torch 2.1+)
        hooks = tuple(
            getattr(torch._C, name, None)
            for name in ("_cuda_getDevice", "_cuda_exchangeDevice", "_cuda_maybeExchangeDevice")
        )
        return hooks if all(hooks) else super().device_switch_hooks()  # type: ignore[misc,return-value]

    def cuda_compiler(self) -> str | None:
        return "CuPy RawModule (NVRTC)"

    def compile_cuda(self, source: str, *, options: tuple[str, ...], device) -> Any:
        return cupy_raw_module(
            source,
            options=options,
            device=device,
            hip=False,
            package="cupy-cuda13x",
            warp_size=device.warp_size or 32,
        )

    def blas_library(self, framework: str) -> str:
        if framework == "torch":
            import torch

            preferred = str(torch.backends.cuda.preferred_blas_library()).lower()
            return "cuBLASLt" if "lt" in preferred else "cuBLAS"
        return "cuBLAS"
