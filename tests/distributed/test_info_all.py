"""`portagpu info --all`: every device of every backend present, each with
telemetry, and the visible-device variables in effect. The two-GPU case is
SIMULATED (portagpu's device list replaced). Each GPU row carries a telemetry
source: NVML where the host has it (a GPU runner), else why it is unavailable."""

from __future__ import annotations

import json

from portagpu import device as device_module
from portagpu.cli import main
from portagpu.device import Device


def run_json(capsys, *args: str) -> dict:
    assert main(["info", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_all_adds_the_other_backends_devices_with_telemetry(capsys, monkeypatch):
    gpus = [
        Device("nvidia", "cuda", i, "NVIDIA H200", "sm_90", 32, 132, 141 * 2**30, "cuBLAS")
        for i in range(2)
    ]
    monkeypatch.setattr(device_module, "devices", lambda: list(gpus))
    plain = run_json(capsys)
    assert [d["backend"] for d in plain["devices"]] == ["cuda", "cuda"]
    everything = run_json(capsys, "--all")
    assert [(d["backend"], d["index"]) for d in everything["devices"]] == [
        ("cuda", 0),
        ("cuda", 1),
        ("cpu", 0),
    ]
    assert len(everything["telemetry"]) == 3
    for reading in everything["telemetry"][:2]:
        assert reading["source"] == "nvml" or reading["source"].startswith("unavailable")
    assert everything["telemetry"][2]["memory_total"]  # the CPU's, from /proc


def test_all_names_the_visible_device_variables_and_conflicts(capsys, monkeypatch):
    monkeypatch.delenv("PORTAGPU_DEVICE", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "0")
    shown = run_json(capsys, "--all")["visibility"]
    assert shown["cuda"] == "CUDA_VISIBLE_DEVICES='1'"
    assert shown["rocm"].startswith(
        "CONFLICT: HIP_VISIBLE_DEVICES='0' and CUDA_VISIBLE_DEVICES='1'"
    )
    assert main(["info", "--all"]) == 0
    assert "cuda visible devices  CUDA_VISIBLE_DEVICES='1'" in capsys.readouterr().out
