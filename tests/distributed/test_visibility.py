"""Visible-device variables. The ROCm cases are environment logic only (the
variables as AMD's runtime and PyTorch read them, from their documentation
and source): no AMD GPU is involved. The probe tests use stand-in NVML and
amdsmi modules (tests/device/fakes.py style): SIMULATED hardware."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from portagpu import visibility
from portagpu.errors import VisibilityError
from portagpu.visibility import parse, read, restrict_visible_devices, visible_physical


@pytest.mark.parametrize(
    ("value", "entries"),
    [
        ("0,1", ["0", "1"]),
        (" 2 , 0 ", ["2", "0"]),
        ("1gpu,3", ["1", "3"]),  # strtoul reads the leading digits
        ("0,-1,2", ["0"]),  # a negative entry ends the list
        ("0,x,2", ["0"]),  # so does anything that is not an index or UUID
        ("", []),  # set but empty: no device
        ("0,1,0", []),  # a repeated device hides every device
        ("GPU-8f3a,1", ["GPU-8f3a", "1"]),
    ],
)
def test_parse_follows_the_cuda_runtime(value, entries):
    assert parse(value) == entries


def test_visible_physical_composes_rocr_then_hip():
    env = {"ROCR_VISIBLE_DEVICES": "2,3,5", "HIP_VISIBLE_DEVICES": "2,0"}
    # ROCR keeps physical 2,3,5; HIP's 2,0 index into that list: 5 then 2
    assert visible_physical("rocm", 8, environ=env) == [5, 2]
    assert visible_physical("rocm", 8, environ={}) == list(range(8))


def test_visible_physical_on_nvidia_ignores_amd_variables():
    env = {"CUDA_VISIBLE_DEVICES": "3,1", "HIP_VISIBLE_DEVICES": "0"}
    assert visible_physical("cuda", 4, environ=env) == [3, 1]
    assert visible_physical("cuda", 2, environ={"CUDA_VISIBLE_DEVICES": "1,5,0"}) == [1]


def test_uuids_resolve_by_prefix_or_leave_it_to_the_runtime():
    uuids = {0: "GPU-aaaa-1111", 1: "GPU-bbbb-2222"}
    env = {"CUDA_VISIBLE_DEVICES": "GPU-bbbb,0"}
    assert visible_physical("cuda", 2, uuids.get, environ=env) == [1, 0]
    assert visible_physical("cuda", 2, None, environ=env) is None  # cannot read UUIDs
    assert visible_physical("cuda", 2, uuids.get, environ={"CUDA_VISIBLE_DEVICES": "MIG-1"}) is None


def test_hip_and_cuda_set_differently_is_a_conflict_on_rocm():
    env = {"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "1"}
    with pytest.raises(VisibilityError, match="both set and differ.*set only HIP_VISIBLE_DEVICES"):
        read("rocm", env)
    assert read("rocm", {"HIP_VISIBLE_DEVICES": "0,1", "CUDA_VISIBLE_DEVICES": "0, 1"}).inner == (
        "0",
        "1",
    )
    assert read("cuda", env).inner == ("1",)  # CUDA ignores HIP_VISIBLE_DEVICES


def test_rocr_with_cuda_alias_alone_is_a_conflict():
    env = {"ROCR_VISIBLE_DEVICES": "1", "CUDA_VISIBLE_DEVICES": "1"}
    with pytest.raises(VisibilityError, match="No HIP GPUs are available"):
        read("rocm", env)
    with pytest.raises(VisibilityError, match="lists more devices"):
        read("rocm", {"ROCR_VISIBLE_DEVICES": "1", "HIP_VISIBLE_DEVICES": "0,1"})


def test_restrict_writes_cuda_visible_devices_on_nvidia_and_composes():
    env = {}
    assert restrict_visible_devices([1], backend="cuda", environ=env) == {
        "CUDA_VISIBLE_DEVICES": "1"
    }
    env = {"CUDA_VISIBLE_DEVICES": "4,6,7"}
    restrict_visible_devices([2, 0], backend="cuda", environ=env)
    assert env == {"CUDA_VISIBLE_DEVICES": "7,4"}  # indices as the process saw them


def test_restrict_on_rocm_writes_hip_and_folds_cuda_in():
    env = {"CUDA_VISIBLE_DEVICES": "2,3"}
    changes = restrict_visible_devices([1], backend="rocm", environ=env)
    assert changes == {"HIP_VISIBLE_DEVICES": "3", "CUDA_VISIBLE_DEVICES": None}
    assert env == {"HIP_VISIBLE_DEVICES": "3"}
    env = {"ROCR_VISIBLE_DEVICES": "4,5,6"}
    restrict_visible_devices([0, 2], backend="rocm", environ=env)
    # ROCR stays (the outer filter); HIP indices count within its list
    assert env == {"ROCR_VISIBLE_DEVICES": "4,5,6", "HIP_VISIBLE_DEVICES": "0,2"}
    assert visible_physical("rocm", 8, environ=env) == [4, 6]


def test_restrict_refuses_conflicts_and_unseen_devices():
    env = {"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "1"}
    with pytest.raises(VisibilityError, match="differ"):
        restrict_visible_devices([0], backend="rocm", environ=env)
    assert env == {"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "1"}  # untouched
    with pytest.raises(VisibilityError, match="device 2 is not visible"):
        restrict_visible_devices([2], backend="cuda", environ={"CUDA_VISIBLE_DEVICES": "0,1"})
    for bad in ([], [-1], [0, 0], ["0"]):
        with pytest.raises(VisibilityError):
            restrict_visible_devices(bad, backend="cuda", environ={})


def test_restrict_is_refused_once_torch_started_the_gpu(monkeypatch):
    monkeypatch.setattr(visibility, "_gpu_runtime_started", lambda: True)
    with pytest.raises(VisibilityError, match="already started"):
        restrict_visible_devices([0], backend="cuda")
    assert restrict_visible_devices([0], backend="cuda", environ={}) == {
        "CUDA_VISIBLE_DEVICES": "0"
    }


def test_restrict_in_this_process_sets_the_variable_and_forgets_detection(monkeypatch):
    from portagpu import device as device_module

    monkeypatch.setattr(visibility, "_gpu_runtime_started", lambda: False)  # GPU suites

    before = device_module.detection_count
    assert restrict_visible_devices([0], backend="cuda") == {"CUDA_VISIBLE_DEVICES": "0"}
    import os

    assert os.environ["CUDA_VISIBLE_DEVICES"] == "0"  # conftest's monkeypatch restores it
    assert device_module.detection_count > before


def test_cpu_has_no_variable_and_needs_none():
    assert restrict_visible_devices([0, 1, 5], backend="cpu", environ={}) == {}


def fake_nvml(count: int):
    handles = [f"h{i}" for i in range(count)]
    return SimpleNamespace(
        nvmlInit=lambda: None, nvmlShutdown=lambda: None,
        nvmlDeviceGetCount=lambda: count,
        nvmlDeviceGetHandleByIndex=lambda i: handles[i],
        nvmlDeviceGetHandleByPciBusId=lambda bus: handles[int(bus.split(":")[1])],
        nvmlDeviceGetUUID=lambda h: f"GPU-{h}-uuid",
        nvmlDeviceGetName=lambda h: f"NVIDIA H200 #{h}",
        nvmlDeviceGetCudaComputeCapability=lambda h: (9, 0),
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(total=141 * 2**30, used=int(h[1:])),
        nvmlDeviceGetPciInfo=lambda h: SimpleNamespace(busId=f"00000000:{int(h[1:]):02X}:00.0"),
        nvmlSystemGetDriverVersion=lambda: "580.00",
        nvmlSystemGetCudaDriverVersion=lambda: 13000,
        nvmlDeviceGetUtilizationRates=lambda h: SimpleNamespace(gpu=1),
        nvmlDeviceGetTemperature=lambda h, kind: 30, NVML_TEMPERATURE_GPU=0,
        nvmlDeviceGetPowerUsage=lambda h: 100_000,
    )  # fmt: skip


def test_nvml_probe_lists_only_the_visible_gpus_in_cuda_order(monkeypatch):
    import sys

    from portagpu.backends.nvidia import probe

    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(4))
    assert [d.name for d in probe.from_nvml()] == [f"NVIDIA H200 #h{i}" for i in range(4)]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-h3,1")
    found = probe.from_nvml()
    # torch would call these cuda:0 and cuda:1: the indices follow, the names are physical 3, 1
    assert [(d.index, d.name) for d in found] == [(0, "NVIDIA H200 #h3"), (1, "NVIDIA H200 #h1")]
    import portagpu

    assert portagpu.telemetry(found[0]).memory_used == 3  # NVML handle of physical GPU 3


def test_amdsmi_probe_and_telemetry_follow_hip_visible_devices(monkeypatch):
    """amdsmi numbers every GPU; with HIP_VISIBLE_DEVICES=1 HIP (and torch) see one."""
    import sys

    from portagpu.backends.amd import probe

    from ..device.fakes import fake_amdsmi

    monkeypatch.setitem(sys.modules, "amdsmi", fake_amdsmi(power={"current_socket_power": 750}))
    everything = probe.from_amdsmi()
    assert len(everything) == 2
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "1")
    (only,) = probe.from_amdsmi()
    assert (only.index, only.name) == (0, everything[1].name)
    import portagpu

    # HIP id 1 is the fake's "h-a" (1 MB used, utilisation "N/A"); unmapped,
    # index 0 would have read HIP id 0 ("h-b": 10,240 MB, 87 %)
    reading = portagpu.telemetry(only)
    assert (reading.memory_used, reading.utilization) == (2**20, None)
