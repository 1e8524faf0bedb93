"""Adding a vendor touches only its backend package plus one registration line.

A fifth backend, "xpu" (Intel), is registered here the way a third party would:
an entry point in the `portagpu.backends` group naming a module with BACKEND
(the entry points are monkeypatched; the module is built in this file, as
backends/xpu/ would be). No other portagpu file knows about it, yet detection,
torch's device string, the BLAS label, kernel dispatch, Triton option
filtering and the pytest plugin's markers all work. The XPU itself is
simulated: its probe reports one device without hardware.
"""

from __future__ import annotations

import sys
import types
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
import torch

import portagpu
from portagpu import backends
from portagpu.backends.base import Backend
from portagpu.device import Device, clear_cache, device_of
from portagpu.errors import LaunchError
from portagpu.readings import Telemetry

MODULE = "portagpu_test_xpu"


def _xpu_device(index: int = 0) -> Device:
    return Device(
        vendor="intel",
        backend="xpu",
        index=index,
        name="Simulated Intel Data Center GPU Max",
        arch="pvc",
        warp_size=16,
        multiprocessors=128,
        memory_total=None,
        blas="oneMKL",
        source="simulated",
    )


class XpuBackend(Backend):
    """What backends/xpu/__init__.py (with probe.py, telemetry.py, runtime.py) would hold."""

    name = "xpu"
    vendor = "intel"
    display_name = "XPU (Intel)"
    priority = 40  # after the built-in GPUs, before the CPU
    torch_device_type = "xpu"
    triton_mode = "native"  # intel-xpu-backend-for-triton
    triton_options = frozenset({"grf_mode"})
    probes = types.SimpleNamespace(
        present=lambda: True, probe=lambda force=False: [_xpu_device()], absence_reason=lambda: ""
    )
    readings = types.SimpleNamespace(read=lambda device: Telemetry(source="simulated"))

    def warp_size_for(self, arch: str | None) -> int | None:
        return 16

    def cuda_compiler(self) -> str | None:
        return None

    def compile_cuda(self, source: str, *, options: tuple[str, ...], device: Device) -> None:
        raise LaunchError("CUDA C source cannot be compiled for XPU")

    def blas_library(self, framework: str) -> str:
        return "oneMKL"


@pytest.fixture
def xpu_registered(monkeypatch):
    """The xpu entry point next to the real ones, as `pip install portagpu-xpu` would add."""
    from portagpu.runtime import triton_launch

    module = types.ModuleType(MODULE)
    module.BACKEND = XpuBackend()
    monkeypatch.setitem(sys.modules, MODULE, module)
    real = backends._entry_points()
    point = EntryPoint(name="xpu", value=MODULE, group=backends.ENTRY_POINT_GROUP)
    monkeypatch.setattr(backends, "_entry_points", lambda: [*real, point])
    monkeypatch.delenv("PORTAGPU_DEVICE", raising=False)

    def forget() -> None:
        backends.clear_registry()
        triton_launch.foreign_triton_options.cache_clear()
        clear_cache()

    forget()
    yield module.BACKEND
    monkeypatch.undo()
    forget()


def test_registered_in_priority_order_and_detected(xpu_registered, monkeypatch):
    assert backends.backend_names() == ("cuda", "rocm", "mps", "xpu", "cpu")
    assert backends.get_backend("xpu") is xpu_registered
    monkeypatch.setenv("PORTAGPU_DEVICE", "xpu")
    device = portagpu.detect()
    assert (device.vendor, device.backend, device.warp_size) == ("intel", "xpu", 16)
    assert device.is_gpu
    assert device.torch_device == "xpu:0"
    assert portagpu.telemetry(device).source == "simulated"


def test_an_unregistered_name_is_still_refused(xpu_registered, monkeypatch):
    monkeypatch.setenv("PORTAGPU_DEVICE", "tpu")
    with pytest.raises(portagpu.PortagpuError, match="cuda, rocm, mps, xpu, cpu"):
        portagpu.detect()


class _XpuTensor(torch.Tensor):
    """A CPU tensor that says it lives on xpu:0 (torch here has no XPU)."""

    @property
    def device(self) -> torch.device:
        return torch.device("xpu", 0)


def test_matmul_is_labelled_by_the_new_backend(xpu_registered):
    a = torch.randn(4, 3).as_subclass(_XpuTensor)
    b = torch.randn(3, 2).as_subclass(_XpuTensor)
    portagpu.matmul(a, b)
    call = portagpu.last_backend()
    assert (call.library, call.framework, call.device) == ("oneMKL", "torch", "xpu:0")


def test_kernels_dispatch_on_the_new_device(xpu_registered, monkeypatch):
    from portagpu.kernels import _dispatch, _tuning

    device = device_of(torch.empty(0).as_subclass(_XpuTensor))
    assert device.backend == "xpu" and device.vendor == "intel"
    assert _dispatch.unavailable("triton", device) is None  # Triton has an XPU backend
    assert "XPU" not in _dispatch.unavailable("cuda", device)  # CUDA C needs CUDA or ROCm
    assert _tuning.config("softmax", device.vendor, 1024) == _tuning.config(
        "softmax", "default", 1024
    )
    assert _dispatch.choose("softmax", device, "triton") == "triton"
    with pytest.raises(LaunchError, match="cannot run on Simulated Intel"):
        _dispatch.choose("reduce", device, "cuda", impls=("triton", "cuda", "torch"))
    # its own Triton option reaches portagpu.launch, and is dropped on other vendors
    calls = []
    monkeypatch.setattr(portagpu, "launch", lambda kernel, grid, *args, **meta: calls.append(meta))
    _dispatch.launch_triton(
        "kernel", (1,), device=device, config={"num_warps": 4, "grf_mode": "large"}
    )
    assert calls[-1] == {"num_warps": 4, "grf_mode": "large"}
    from portagpu.runtime.triton_launch import foreign_triton_options

    assert "grf_mode" in foreign_triton_options("cuda")
    assert "grf_mode" not in foreign_triton_options("xpu")


def test_pytest_markers_come_with_the_backend(xpu_registered, pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.xpu
        def test_xpu(): pass

        @pytest.mark.gpu
        def test_any_gpu(): pass

        @pytest.mark.cuda
        def test_cuda(): pass
    """)
    result = pytester.runpytest(
        "--portagpu-device", "xpu", "--strict-markers", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(
        ["portagpu: xpu:0 'Simulated Intel*", "*1 skipped for vendor (cuda: 1)*"]
    )
    pytester.runpytest("--markers").stdout.fnmatch_lines(["@pytest.mark.xpu: needs XPU (Intel)*"])


def test_pyproject_registers_every_builtin_backend_package():
    """The one line per vendor: pyproject.toml's entry point for each backends/<vendor>/."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    root = Path(__file__).resolve().parents[2]
    points = tomllib.loads((root / "pyproject.toml").read_text())["project"]["entry-points"]
    registered = points[backends.ENTRY_POINT_GROUP]
    packages = {
        p.name for p in (root / "portagpu" / "backends").iterdir() if (p / "__init__.py").exists()
    }
    assert sorted(registered.values()) == sorted(f"portagpu.backends.{p}" for p in packages)
    for name, module in registered.items():
        assert backends.get_backend(name).name == name, module
