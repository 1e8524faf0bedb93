"""The interface every vendor backend implements (one package per vendor, as in
Triton's backends/nvidia and backends/amd). Callers ask the backend of a
device; nothing else in portagpu branches on the vendor."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from portagpu.device import Device
    from portagpu.readings import Telemetry


class Backend(ABC):
    name: str  # "cuda" | "rocm" | "mps" | "cpu"
    vendor: str  # "nvidia" | "amd" | "apple" | "cpu"
    display_name: str  # for messages: "CUDA (NVIDIA)"

    # --- discovery and telemetry -------------------------------------------
    # Each vendor package supplies two modules: `probes` (present, probe,
    # absence_reason) and `readings` (read). The base class delegates to them.
    probes: ModuleType
    readings: ModuleType

    def present(self) -> bool:
        """Cheap hint that this backend's hardware may exist, importing nothing heavy."""
        return self.probes.present()

    def probe(self, force: bool = False) -> list[Device]:
        """The devices of this backend; [] when absent. `force` skips the cheap
        presence hint (PORTAGPU_DEVICE asked for this backend)."""
        return self.probes.probe(force=force)

    def absence_reason(self) -> str:
        """Why probe() found nothing, for the error message."""
        return self.probes.absence_reason()

    def telemetry(self, device: Device) -> Telemetry:
        """Live readings; fields a library cannot give are None, never a crash."""
        return self.readings.read(device)

    # --- multi-GPU (read by portagpu.distributed and portagpu.visibility) -----
    #: torch.distributed backend for tensors on this vendor's devices ("nccl"
    #: on ROCm too: PyTorch's ROCm build runs RCCL under that name)
    dist_backend: str = "gloo"
    #: the collective library behind it; None where there is none (MPS)
    collective_library: str | None = None
    #: each rank binds one device of this vendor (torch's current device)
    device_per_rank: bool = False
    #: the visible-device variable portagpu writes to restrict a process
    visible_devices_var: str | None = None
    #: variables the runtime reads as the same filter (conflict if they differ)
    visible_devices_aliases: tuple[str, ...] = ()
    #: variables applied before visible_devices_var (it selects within their list)
    visible_devices_outer: tuple[str, ...] = ()

    # --- runtime (implemented in <vendor>/runtime.py, see portagpu/runtime) --
    #: Triton launch options only this vendor's compiler understands; the
    #: options of the other vendors are dropped before launching here.
    triton_options: frozenset[str] = frozenset()
    #: Triton kernels run in Triton's CPU interpreter (no Triton GPU backend).
    triton_interpreted: bool = False
    #: portagpu may call a cached compiled Triton kernel directly, bypassing
    #: Triton's per-call dispatch (only where its argument specialisation is
    #: known to match portagpu's cache key).
    triton_fast_path: bool = False

    @abstractmethod
    def cuda_compiler(self) -> str | None:
        """How CUDA C source is compiled here ("CuPy/NVRTC", ...); None if it cannot be."""

    @abstractmethod
    def compile_cuda(self, source: str, *, options: tuple[str, ...], device: Device) -> Any:
        """Compile CUDA C source for `device`; returns a CuPy RawModule.

        Raises LaunchError when this backend cannot compile CUDA source."""

    @abstractmethod
    def blas_library(self, framework: str) -> str:
        """The BLAS library that serves a matmul on this backend's device for
        arrays of `framework` ("torch" or "cupy")."""
