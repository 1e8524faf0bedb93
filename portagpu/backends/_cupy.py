"""Compiling CUDA C source with CuPy (NVRTC on NVIDIA, hiprtc on ROCm), for
the backends whose `compile_cuda` goes through CuPy. Lives under backends/ so
that backends never import portagpu.runtime (runtime imports backends)."""

from __future__ import annotations

from typing import Any

from portagpu.errors import LaunchError


def cupy_raw_module(
    source: str, *, options: tuple[str, ...], device: Any, hip: bool, package: str, warp_size: int
) -> Any:
    """Compile `source` with CuPy for `device`, defining WARP_SIZE and
    PORTAGPU_WARP_SIZE as `warp_size`. `hip`: the CuPy build this backend
    needs (ROCm or CUDA); `package`: the pip package that provides it."""
    try:
        import cupy
    except ImportError as exc:
        raise LaunchError(
            f"CUDA C kernels need CuPy on {device.name}: pip install {package} ({exc})"
        ) from None
    built_for_hip = bool(cupy.cuda.runtime.is_hip)
    if built_for_hip != hip:
        built = "ROCm" if built_for_hip else "CUDA"
        raise LaunchError(f"this CuPy is built for {built}, but the device is {device.name}")
    defines = (f"-DWARP_SIZE={warp_size}", f"-DPORTAGPU_WARP_SIZE={warp_size}")
    with cupy.cuda.Device(device.index):
        # the user's source: portagpu lint checks it where the user wrote it
        module = cupy.RawModule(code=source, options=(*options, *defines))  # noqa: PG699
        try:
            module.compile()
        except Exception as exc:  # CompileException carries the compiler log
            raise LaunchError(f"compiling CUDA source for {device.name} failed: {exc}") from None
    return module
