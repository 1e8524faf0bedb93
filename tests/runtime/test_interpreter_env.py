"""When `import portagpu` switches Triton's interpreter on (docs/runtime.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from portagpu.runtime import interpret


@pytest.mark.parametrize(
    ("environ", "gpu_node", "expected"),
    [
        ({"TRITON_INTERPRET": "0"}, False, None),  # the user decided
        ({"TRITON_INTERPRET": "1"}, True, None),
        ({"PORTAGPU_DEVICE": "cpu"}, True, True),
        ({"PORTAGPU_DEVICE": "mps"}, True, True),
        ({"PORTAGPU_DEVICE": "cuda"}, False, False),
        ({"PORTAGPU_DEVICE": "rocm"}, False, False),
        ({}, True, False),
        ({}, False, True),
    ],
)
def test_precedence(monkeypatch, environ, gpu_node, expected):
    monkeypatch.setattr(interpret, "triton_gpu_hint", lambda: gpu_node)
    assert interpret.wants_interpreter(environ) is expected


def test_gpu_hint_reads_device_nodes(monkeypatch):
    monkeypatch.setattr(interpret.sys, "platform", "linux")
    monkeypatch.setattr(interpret.os.path, "exists", lambda path: path == "/dev/kfd")
    assert interpret.triton_gpu_hint() is True
    monkeypatch.setattr(interpret.os.path, "exists", lambda path: False)
    assert interpret.triton_gpu_hint() is False


def test_import_portagpu_sets_it_without_importing_heavy_modules():
    code = (
        "import os, sys; import portagpu; "
        "print(os.environ.get('TRITON_INTERPRET')); "
        "print(sorted(m for m in ('torch', 'triton', 'cupy', 'numpy') if m in sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PORTAGPU_DEVICE")}
    env["PORTAGPU_DEVICE"] = "cpu"
    lines = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           check=True).stdout.split("\n")
    assert lines[0] == "1"
    assert lines[1] == "[]"
