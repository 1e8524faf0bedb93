"""The interface every vendor backend implements (one package per vendor, as in
Triton's backends/nvidia and backends/amd). Every vendor fact lives in the
vendor's package: callers ask the backend of a device (`backend_for(device)`)
and never branch on the vendor's name. tests/test_vendor_facts.py enforces it."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from portagpu.device import Device
    from portagpu.readings import Telemetry

TritonMode = Literal["native", "interpreted", "none"]
#: (current index, exchange(index) -> previous, switch back to an index) -- see device_switch_hooks
DeviceSwitch = tuple[Callable[[], int], Callable[[int], int], Callable[[int], int]]


class Backend(ABC):
    name: str  # PORTAGPU_DEVICE value and Device.backend: "cuda", "rocm", "mps", "cpu"
    vendor: str  # Device.vendor and the tuning-table key: "nvidia", "amd", "apple", "cpu"
    display_name: str  # for messages: "CUDA (NVIDIA)"
    #: Detection order: backends are probed from the lowest priority up and the
    #: first with devices wins (built-ins: cuda 10, rocm 20, mps 30, cpu 1000).
    priority: int = 500
    #: False only for the host CPU: GPU-marked tests skip, kernels size grids
    #: from `max_programs` instead of the device's multiprocessors.
    is_gpu: bool = True
    #: Device nodes whose presence hints at this vendor's driver (no imports).
    device_nodes: tuple[str, ...] = ()

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

    def warp_size_for(self, arch: str | None) -> int | None:
        """The warp (wavefront, SIMD group) width of `arch` when the driver did
        not say; None where the notion does not apply (CPU) or is unknown."""
        return None

    # --- torch and CuPy -----------------------------------------------------
    #: torch's device type for this backend's devices (ROCm GPUs are "cuda" in torch).
    torch_device_type: str
    #: torch names this backend's devices with an index ("cuda:0"), or without ("mps").
    torch_device_indexed: bool = True

    def torch_device(self, index: int) -> str:
        """The device string torch uses for device `index` of this backend."""
        if self.torch_device_indexed:
            return f"{self.torch_device_type}:{index}"
        return self.torch_device_type

    def serves_torch(self, torch: ModuleType | None) -> bool:
        """Whether this torch build's `torch_device_type` tensors live on this
        backend (a ROCm build of torch serves AMD under the "cuda" type)."""
        return True

    def serves_cupy(self, cupy: ModuleType) -> bool:
        """Whether this CuPy build's arrays live on this backend's devices."""
        return False

    def torch_stream(self, stream: Any) -> contextlib.AbstractContextManager[Any]:
        """A context that makes `stream` (a torch/CuPy stream or a raw pointer)
        torch's current stream on this backend's devices."""
        import torch

        from portagpu.errors import LaunchError

        module = getattr(torch, self.torch_device_type)
        if not isinstance(stream, module.Stream):
            ptr = stream if isinstance(stream, int) else getattr(stream, "ptr", None)
            if ptr is None:
                raise LaunchError(
                    f"stream must be a torch/CuPy stream or a raw pointer, got {stream!r}"
                )
            stream = module.ExternalStream(ptr)
        return module.stream(stream)

    # --- runtime (implemented in <vendor>/runtime.py, see portagpu/runtime) --
    #: How Triton kernels run here: "native" (Triton has a GPU backend for it),
    #: "interpreted" (Triton's interpreter, on host copies of the tensors; see
    #: portagpu/runtime/triton_interpreter.py) or "none" (portagpu.launch refuses).
    triton_mode: TritonMode = "none"
    #: Triton launch options only this vendor's compiler understands; the
    #: options of the other vendors are dropped before launching here.
    triton_options: frozenset[str] = frozenset()
    #: portagpu may call a cached compiled Triton kernel directly, bypassing
    #: Triton's per-call dispatch (only where its argument specialisation is
    #: known to match portagpu's cache key); needs `triton_fast_path_hooks`.
    triton_fast_path: bool = False
    #: The GPU driver that Triton launches portagpu repeats (prepared launches,
    #: portagpu.launch's generated code) may call directly
    #: (runtime/driver_launch.py): (library, launch function with
    #: cuLaunchKernel's signature, current-context query, error string); None:
    #: they go through Triton's launcher.
    driver_launch_names: tuple[str, str, str, str] | None = None

    def triton_fast_path_hooks(self) -> tuple[Callable[[], int], Callable[[int], int]]:
        """(current device index, raw current stream of a device index) for the
        fast path; only backends with `triton_fast_path` implement it."""
        raise NotImplementedError(f"{self.display_name} has no Triton fast path")

    def device_switch_hooks(self) -> DeviceSwitch | None:
        """(current device index, make an index current and return the one
        before, make an index current again without creating a context on it)
        where torch selects this backend's GPUs by index; None where there is
        one device (MPS, the CPU). Launches use them to run on their tensors'
        GPU when it is not the current one (portagpu/runtime/placement.py)."""
        if not (self.is_gpu and self.torch_device_indexed):
            return None
        import torch

        module = getattr(torch, self.torch_device_type, None)
        hooks = tuple(
            getattr(module, name, None)
            for name in ("current_device", "_exchange_device", "_maybe_exchange_device")
        )
        return hooks if all(hooks) else None  # type: ignore[return-value]

    def torch_gpu_count(self) -> int | None:
        """How many of this backend's GPUs torch sees in this process (fixed for
        its life: the driver reads the visible-devices variables once); None
        where torch does not pick them by index (MPS, the CPU). With exactly
        one, the current device is always index 0, and launch code need not
        ask for it."""
        if not (self.is_gpu and self.torch_device_indexed):
            return None
        import torch

        count = getattr(getattr(torch, self.torch_device_type, None), "device_count", None)
        return count() if callable(count) else None

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
        arrays of `framework` ("torch", "cupy" or "numpy")."""

    # --- pytest plugin ------------------------------------------------------
    #: The pytest marker a test that needs this backend carries (default: `name`).
    test_marker: str = ""
    #: Its line in `pytest --markers`.
    test_marker_help: str = ""

    def marker(self) -> tuple[str, str]:
        """(marker name, help line) for the pytest plugin."""
        name = self.test_marker or self.name
        return (
            name,
            self.test_marker_help or f"{name}: needs {self.display_name}; skipped elsewhere",
        )
