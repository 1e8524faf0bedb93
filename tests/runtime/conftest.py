"""Simulated devices and a fake CuPy for the runtime tests.

AMD and NVIDIA are simulated here: a `portagpu.device.Device` built by hand
(warp 64 gfx942, warp 32 gfx1100, warp 32 sm_90) is returned by the runtime's
`detect`, and a fake `cupy` module records what would have been compiled and
launched. For the Triton fast path: a stand-in JITFunction that records its
compiles and launches (with gpu_tensors.OnGpu: CPU tensors that say they are on a GPU), and
two simulated GPUs behind torch's device hooks (`FakeGpus`: the current
device, switching it, each device's stream). Nothing in these fakes runs a
kernel.
"""

from __future__ import annotations

import sys
import types

import pytest

from portagpu.device import Device, clear_cache


def make_device(backend: str, arch: str, warp: int | None, index: int = 0) -> Device:
    vendor = {"cuda": "nvidia", "rocm": "amd", "mps": "apple", "cpu": "cpu"}[backend]
    return Device(vendor=vendor, backend=backend, index=index, name=f"simulated {arch}", arch=arch,
                  warp_size=warp, multiprocessors=None, memory_total=None, blas="simulated",
                  source="test")


SIMULATED = {
    "gfx942": lambda: make_device("rocm", "gfx942", 64),
    "gfx1100": lambda: make_device("rocm", "gfx1100", 32),
    "sm_90": lambda: make_device("cuda", "sm_90", 32),
    "mps": lambda: make_device("mps", "apple-m2", 32),
    "cpu": lambda: make_device("cpu", "x86_64", None),
}


@pytest.fixture
def use_device(monkeypatch):
    """use_device("gfx942") -> that simulated Device, which launch() now targets."""

    def use(name: str) -> Device:
        device = SIMULATED[name]()
        monkeypatch.setattr("portagpu.runtime.dispatch.detect", lambda: device)
        clear_cache()  # launches re-read the device only after a new detection
        return device

    yield use
    clear_cache()  # the next test must not see the simulated device


class FakeArray:
    """Stands in for cupy.ndarray: a device id and a contiguity flag."""

    def __init__(self, device_id: int = 0, contiguous: bool = True) -> None:
        self.data = types.SimpleNamespace(device_id=device_id)
        self.flags = types.SimpleNamespace(c_contiguous=contiguous)


class FakeCupy(types.ModuleType):
    """Records RawModule compilations and Function launches."""

    def __init__(self, is_hip: bool, gpus: int = 2) -> None:
        super().__init__("cupy")
        self.ndarray = FakeArray
        self.compiled: list[dict] = []
        self.launches: list[dict] = []
        self.direct = True
        self.linear = True
        fake = self

        class Device:
            def __init__(self, index: int) -> None:
                self.index = index

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        def record(name, grid, block, args, shared_mem, stream, via, linear=False):
            fake.launches.append({"name": name, "grid": grid, "block": block, "args": list(args),
                                  "shared_mem": shared_mem, "stream": stream, "via": via, "linear": linear})

        class Function:
            """cupy.cuda.function.Function: shared_mem and stream positional;
            linear_launch sizes a 1-D launch as CuPy 14's does (absent if
            fake.linear is False)."""

            def __init__(self, name: str) -> None:
                self.name = name
                if not fake.linear:
                    self.linear_launch = None

            def __call__(self, grid, block, args, shared_mem=0, stream=None,
                         enable_cooperative_groups=False):
                record(self.name, grid, block, args, shared_mem, stream, "Function")

            def linear_launch(self, size, args, shared_mem=0, block_max_size=128, stream=None,
                              enable_cooperative_groups=False):
                grid = min(0x7FFFFFFF, (size + block_max_size - 1) // block_max_size)
                block = min(block_max_size, size)
                if is_hip:
                    grid = min(grid, 0xFFFFFFFF // block)
                record(self.name, (grid, 1, 1), (block, 1, 1), args, shared_mem, stream, "Function", True)

        class RawKernel:
            """What RawModule.get_function returns: keyword-only launch options,
            and `.kernel`, the current device's Function (absent if fake.direct
            is False, to exercise the fallback)."""

            def __init__(self, name: str) -> None:
                self.name = name

            def __call__(self, grid, block, args, *, shared_mem=0, stream=None):
                record(self.name, grid, block, args, shared_mem, stream, "RawKernel")

            @property
            def kernel(self):
                if not fake.direct:
                    raise AttributeError("kernel")
                return Function(self.name)

        class RawModule:
            def __init__(self, code: str, options: tuple = ()) -> None:
                self.code, self.options = code, tuple(options)
                fake.compiled.append({"code": code, "options": self.options})

            def compile(self) -> None:
                pass

            def get_function(self, name: str) -> RawKernel:
                return RawKernel(name)

        # how many GPUs CuPy sees (one: the launch code reads no device)
        runtime = types.SimpleNamespace(is_hip=is_hip, getDevice=lambda: 0, getDeviceCount=lambda: gpus)
        self.cuda = types.SimpleNamespace(runtime=runtime, Device=Device)
        self.RawModule = RawModule


@pytest.fixture
def fake_cupy(monkeypatch):
    """fake_cupy(is_hip=False, gpus=2) installs a recording cupy in sys.modules."""

    def install(is_hip: bool = False, gpus: int = 2) -> FakeCupy:
        module = FakeCupy(is_hip, gpus)
        monkeypatch.setitem(sys.modules, "cupy", module)
        return module

    return install


@pytest.fixture(autouse=True)
def _fresh_compile_cache(monkeypatch):
    """Each test compiles anew (the compiled-module cache is process-wide)."""
    from portagpu.runtime import cuda_source

    monkeypatch.setattr(cuda_source, "_COMPILED", {})


# --- the Triton fast path -----------------------------------------------------------
class FakeGpus:
    """Two (or more) simulated GPUs as torch's CUDA hooks see them: the current
    index, switching it (every switch recorded) and each device's current
    stream (1234 + index)."""

    def __init__(self) -> None:
        self.current = 0
        self.switches: list[int] = []

    def get(self) -> int:
        return self.current

    def exchange(self, index: int) -> int:
        previous, self.current = self.current, index
        self.switches.append(index)
        return previous

    @staticmethod
    def stream(index: int) -> int:
        return 1234 + index


@pytest.fixture
def gpus(monkeypatch) -> FakeGpus:
    """Simulated GPUs behind torch._C's CUDA device and stream calls."""
    import torch

    fake = FakeGpus()
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)  # several: launch code asks which is current
    for name, hook in (("_cuda_getDevice", fake.get), ("_cuda_exchangeDevice", fake.exchange),
                       ("_cuda_maybeExchangeDevice", fake.exchange),
                       ("_cuda_getCurrentRawStream", fake.stream)):
        monkeypatch.setattr(torch._C, name, hook, raising=False)
    return fake


class FakeCompiled:
    def __init__(self, kernel: JITFunction) -> None:
        self.function, self.packed_metadata = object(), object()
        self.kernel = kernel
        self.device = kernel.where()  # the device it was compiled and loaded for

    def run(self, *launch):
        self.kernel.record(("fast", launch))

    def launch_metadata(self, grid, stream, *args):
        return ("metadata", grid, stream)


class JITFunction:
    """Stand-in for triton.runtime.jit.JITFunction(x, y, n, BLOCK: constexpr, EXTRA: constexpr=7).
    `log` has one entry per compile ("native") or fast launch ("fast");
    `devices` the current device at each."""

    __name__ = "add"
    arg_names = ["x", "y", "n", "BLOCK", "EXTRA"]

    def __init__(self, where=lambda: 0) -> None:
        spec = [("x", False, None), ("y", False, None), ("n", False, None), ("BLOCK", True, None),
                ("EXTRA", True, 7)]
        self.params = [types.SimpleNamespace(name=n, is_constexpr=c, has_default=d is not None, default=d)
                       for n, c, d in spec]
        self.pre_run_hooks: list = []
        self.used_global_vals: dict = {}
        self.log: list = []
        self.devices: list[int] = []
        self.where = where

    def record(self, entry: tuple) -> None:
        self.log.append(entry)
        self.devices.append(self.where())

    def run(self, *args, **kwargs):  # pragma: no cover - launches go through __getitem__
        raise AssertionError

    def __getitem__(self, grid):
        def native(*args, **kwargs):
            self.record(("native", grid, args, kwargs))
            return FakeCompiled(self)

        return native


JITFunction.__module__ = "triton.runtime.jit"


@pytest.fixture
def kernel(use_device, gpus):
    use_device("sm_90")
    return JITFunction(gpus.get)


def kinds(kernel):
    return [entry[0] for entry in kernel.log]
