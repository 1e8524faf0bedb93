import dataclasses
import os

import pytest

import portagpu
from portagpu.backends.amd.probe import gfx_arch, wave_size_for_arch
from portagpu.errors import ConfigError, DeviceNotFoundError

from .fakes import MI300X, RX7900, fake_torch

ON_GPU_HOST = any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/kfd"))


@pytest.mark.skipif(ON_GPU_HOST, reason="this machine has a GPU")
def test_cpu_default_is_the_real_cpu():
    device = portagpu.detect()
    assert (device.vendor, device.backend, device.warp_size) == ("cpu", "cpu", None)
    assert device.multiprocessors == os.cpu_count()
    assert device.memory_total and device.memory_total > 2**28
    assert device.torch_device == "cpu" and not device.is_gpu
    assert portagpu.devices() == [device]


def test_device_is_frozen_and_cached():
    device = portagpu.detect()
    with pytest.raises(dataclasses.FrozenInstanceError):
        device.warp_size = 64  # type: ignore[misc]
    assert portagpu.detect() is device


def test_unknown_override_is_a_config_error(monkeypatch):
    monkeypatch.setenv("PORTAGPU_DEVICE", "tpu")
    with pytest.raises(ConfigError, match="PORTAGPU_DEVICE='tpu'.*cuda, rocm, mps, cpu"):
        portagpu.detect()


@pytest.mark.skipif(ON_GPU_HOST, reason="this machine has a GPU")
@pytest.mark.parametrize("backend", ["cuda", "rocm", "mps"])
def test_absent_backend_override_fails_clearly(monkeypatch, backend):
    monkeypatch.setenv("PORTAGPU_DEVICE", backend)
    with pytest.raises(DeviceNotFoundError, match=f"PORTAGPU_DEVICE={backend} asked for"):
        portagpu.detect()


def test_cpu_override_always_works(monkeypatch):
    monkeypatch.setenv("PORTAGPU_DEVICE", "cpu")
    assert portagpu.detect().backend == "cpu"


# --- simulated AMD (ROCm torch stand-in; values from AMD's documentation) ---


def test_rocm_mi300_reports_wave64_and_plain_arch(swap_module):
    swap_module("torch", fake_torch(hip="6.4.43482", props=[MI300X, RX7900]))
    first, second = portagpu.devices()
    assert (first.vendor, first.backend, first.arch, first.warp_size) == (
        "amd", "rocm", "gfx942", 64,
    )  # fmt: skip
    assert first.multiprocessors == 304 and first.blas.startswith("rocBLAS")
    assert first.runtime_version == "HIP 6.4.43482" and first.source == "torch"
    # RDNA3 without a reported warp size: derived from the arch
    assert (second.arch, second.warp_size) == ("gfx1100", 32)
    assert first.torch_device == "cuda:0"  # torch calls ROCm devices "cuda"


def test_rocm_torch_is_not_mistaken_for_nvidia(swap_module, monkeypatch):
    swap_module("torch", fake_torch(hip="6.4", props=[MI300X]))
    monkeypatch.setenv("PORTAGPU_DEVICE", "cuda")
    if not ON_GPU_HOST:
        with pytest.raises(DeviceNotFoundError):
            portagpu.detect()


@pytest.mark.parametrize(
    ("arch", "wave"),
    [("gfx906", 64), ("gfx90a", 64), ("gfx942", 64), ("gfx803", 64),
     ("gfx1030", 32), ("gfx1100", 32), ("gfx1201", 32), ("sm_90", None), (None, None)],
)  # fmt: skip
def test_wave_size_from_arch(arch, wave):
    assert wave_size_for_arch(arch) == wave


def test_gfx_arch_drops_feature_flags():
    assert gfx_arch("gfx942:sramecc+:xnack-") == "gfx942"
    assert gfx_arch("gfx90a:xnack+") == "gfx90a"
    assert gfx_arch("NVIDIA H100") is None  # gcnArchName repeats the name on CUDA


# --- simulated NVIDIA via torch (the real one is proven on the H100) ---


def test_nvidia_via_torch(swap_module):
    from types import SimpleNamespace

    h100 = SimpleNamespace(name="NVIDIA H100 80GB HBM3", major=9, minor=0, warp_size=32,
                           multi_processor_count=132, total_memory=80 * 2**30,
                           pci_bus_id=0x19, pci_domain_id=0, pci_device_id=0)  # fmt: skip
    swap_module("torch", fake_torch(cuda="13.0", props=[h100]))
    device = portagpu.detect()
    assert (device.vendor, device.arch, device.warp_size, device.blas) == (
        "nvidia", "sm_90", 32, "cuBLAS",
    )  # fmt: skip
    assert device.pci_bus_id == "00000000:19:00.0"


# --- simulated Apple MPS ---


def test_mps_via_torch(swap_module, monkeypatch):
    swap_module("torch", fake_torch(mps=True))
    monkeypatch.setenv("PORTAGPU_DEVICE", "mps")
    device = portagpu.detect()
    assert (device.vendor, device.backend, device.warp_size) == ("apple", "mps", 32)
    assert device.memory_total == 48 * 2**30 and device.torch_device == "mps"
    reading = portagpu.telemetry(device)
    assert reading.memory_used == 3 * 2**30 and reading.power is None


# --- CuPy as the source (simulated builds) ---


def _fake_cupy(*, is_hip: bool, props: list[dict], version: int):
    from types import SimpleNamespace

    runtime = SimpleNamespace(
        is_hip=is_hip,
        getDeviceCount=lambda: len(props),
        getDeviceProperties=lambda i: props[i],
        runtimeGetVersion=lambda: version,
    )
    return SimpleNamespace(cuda=SimpleNamespace(runtime=runtime))


def test_cupy_rocm_build_gives_amd_devices_only():
    from portagpu.backends.amd.probe import from_cupy as amd_from_cupy
    from portagpu.backends.nvidia.probe import from_cupy as nvidia_from_cupy

    mi210 = {"name": b"AMD Instinct MI210", "gcnArchName": b"gfx90a:sramecc+:xnack-",
             "warpSize": 64, "multiProcessorCount": 104, "totalGlobalMem": 64 * 2**30}  # fmt: skip
    cupy = _fake_cupy(is_hip=True, props=[mi210], version=60443482)
    (device,) = amd_from_cupy(cupy)
    assert (device.arch, device.warp_size, device.multiprocessors, device.source) == (
        "gfx90a", 64, 104, "cupy",
    )  # fmt: skip
    assert nvidia_from_cupy(cupy) == []


def test_cupy_without_gpu_is_no_answer_not_a_crash():
    from types import SimpleNamespace

    from portagpu.backends.nvidia.probe import from_cupy

    def no_device():
        raise RuntimeError("cudaErrorNoDevice")

    runtime = SimpleNamespace(is_hip=False, getDeviceCount=no_device)
    assert from_cupy(SimpleNamespace(cuda=SimpleNamespace(runtime=runtime))) is None
    assert from_cupy(None) is None
