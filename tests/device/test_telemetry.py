import sys
import textwrap

import pytest

import portagpu
from portagpu.device import Device

from .fakes import fake_amdsmi

AMD = Device(vendor="amd", backend="rocm", index=0, name="MI300X", arch="gfx942", warp_size=64,
             multiprocessors=304, memory_total=None, blas="rocBLAS/hipBLASLt")  # fmt: skip
NVIDIA = Device(vendor="nvidia", backend="cuda", index=0, name="H100", arch="sm_90",
                warp_size=32, multiprocessors=132, memory_total=None, blas="cuBLAS")  # fmt: skip


def test_cpu_readings_are_real():
    reading = portagpu.telemetry(portagpu.devices()[0] if not _gpu() else _cpu())
    assert reading.memory_total and 0 < reading.memory_used < reading.memory_total
    assert reading.temperature is None or reading.temperature > 0


def _gpu():
    return portagpu.detect().is_gpu


def _cpu():
    from portagpu.backends import get_backend

    return get_backend("cpu").probe()[0]


@pytest.mark.parametrize(
    ("power", "watts"),
    [({"current_socket_power": 553, "average_socket_power": "N/A"}, 553.0),  # MI300
     ({"current_socket_power": "N/A", "average_socket_power": 298}, 298.0),  # MI200
     ({"current_socket_power": 0xFFFFFFFF, "average_socket_power": "N/A"}, None)],
)  # fmt: skip
def test_amdsmi_units_power_keys_and_hip_mapping(swap_module, power, watts):
    swap_module("amdsmi", fake_amdsmi(power=power))
    reading = portagpu.telemetry(AMD)
    # HIP device 0 is amdsmi's second handle (hip_id mapping); VRAM is in MB
    assert reading.memory_used == 10240 * 2**20 and reading.memory_total == 196608 * 2**20
    assert reading.utilization == 87.0
    assert reading.temperature == 52.0  # HOTSPOT unsupported -> EDGE
    assert reading.power == watts and reading.source == "amdsmi"


def test_amdsmi_without_native_library_gives_none_fields(tmp_path, monkeypatch):
    # PyPI's amdsmi raises KeyError, not ImportError, when libamd_smi.so is absent
    (tmp_path / "amdsmi.py").write_text("raise KeyError('libamd_smi.so')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "amdsmi", raising=False)
    reading = portagpu.telemetry(AMD)
    assert reading.memory_used is None and reading.power is None
    assert "amdsmi" in reading.source


def test_nvml_milliwatts_become_watts(swap_module):
    from types import SimpleNamespace

    class NVMLError(Exception):
        pass

    def unsupported(*_):
        raise NVMLError("Not Supported")

    pynvml = SimpleNamespace(
        nvmlInit=lambda: None, nvmlShutdown=lambda: None,
        nvmlDeviceGetHandleByPciBusId=unsupported,
        nvmlDeviceGetHandleByIndex=lambda i: "h0",
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(used=5 * 2**30, total=80 * 2**30),
        nvmlDeviceGetUtilizationRates=lambda h: SimpleNamespace(gpu=42),
        nvmlDeviceGetTemperature=lambda h, kind: 38, NVML_TEMPERATURE_GPU=0,
        nvmlDeviceGetPowerUsage=lambda h: 113_250,
    )  # fmt: skip
    swap_module("pynvml", pynvml)
    reading = portagpu.telemetry(NVIDIA)
    assert (reading.memory_used, reading.utilization, reading.temperature, reading.power) == (
        5 * 2**30, 42.0, 38.0, 113.25,
    )  # fmt: skip


def test_broken_nvml_gives_none_fields_not_a_crash(swap_module):
    from types import SimpleNamespace

    def library_not_found():
        raise OSError("NVML Shared Library Not Found")

    swap_module("pynvml", SimpleNamespace(nvmlInit=library_not_found))
    reading = portagpu.telemetry(NVIDIA)
    assert reading.memory_used is None and reading.power is None
    assert reading.source.startswith("unavailable")


def test_info_json_and_table(capsys):
    import json

    from portagpu.cli import main

    assert main(["info", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["device"]["backend"] == portagpu.detect().backend
    assert report["telemetry"][0]["memory_total"]
    assert main(["info"]) == 0
    table = capsys.readouterr().out
    assert "warp size" in table and "BLAS" in table


def test_info_bad_override_exits_2_with_one_line(monkeypatch, capsys):
    from portagpu.cli import main

    monkeypatch.setenv("PORTAGPU_DEVICE", "quantum")
    assert main(["info"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "PORTAGPU_DEVICE='quantum'" in err[0]


def test_import_portagpu_stays_light():
    import subprocess

    code = textwrap.dedent(
        """
        import sys, portagpu, portagpu.cli
        portagpu.cli.build_parser()
        heavy = {"torch", "cupy", "triton", "libcst", "numpy"} & set(sys.modules)
        print(sorted(heavy))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
