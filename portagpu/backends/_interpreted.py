"""Runtime hooks shared by backends with no CUDA compiler and no Triton GPU backend."""

from __future__ import annotations

from typing import Any

from portagpu.errors import LaunchError


class InterpretedRuntime:
    """Triton kernels run in Triton's interpreter; CUDA C source cannot be compiled."""

    triton_options: frozenset[str] = frozenset()
    triton_mode = "interpreted"
    triton_fast_path = False
    # how the error for CUDA C source names this backend
    compile_target = "this device"

    def cuda_compiler(self) -> str | None:
        return None

    def compile_cuda(self, source: str, *, options: tuple[str, ...], device) -> Any:
        raise LaunchError(f"CUDA C source cannot be compiled for {self.compile_target}")
