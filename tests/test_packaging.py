"""The wheel carries every part of portagpu, under the portagpu namespace only."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    # --no-build-isolation: the offline path a GPU host without internet takes
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
           "-w", str(out), str(REPO)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, cwd=out)
    (path,) = out.glob("portagpu-*.whl")
    return zipfile.ZipFile(path)


@pytest.fixture(scope="module")
def wheel_names(wheel) -> list[str]:
    return wheel.namelist()


def test_no_generic_top_level_names(wheel_names):
    top = {name.split("/")[0] for name in wheel_names}
    top = {t for t in top if not t.endswith((".dist-info", ".data"))}
    assert top == {"portagpu"}


def test_rules_kernels_and_bridge_are_inside_portagpu(wheel_names):
    assert any(n.startswith("portagpu/rules/") and n.endswith(".yaml") for n in wheel_names)
    assert "portagpu/kernels/__init__.py" in wheel_names
    assert "portagpu/hipify_bridge/__init__.py" in wheel_names
    assert "portagpu/py.typed" in wheel_names


def test_every_repo_data_file_is_in_the_wheel(wheel_names):
    names = set(wheel_names)
    for folder, package in (("rules", "portagpu/rules"), ("kernels", "portagpu/kernels"),
                            ("hipify_bridge", "portagpu/hipify_bridge")):  # fmt: skip
        for path in (REPO / folder).rglob("*"):
            if path.suffix in {".yaml", ".cu", ".cuh", ".h", ".py"} and "__pycache__" not in path.parts:
                rel = path.relative_to(REPO / folder).as_posix()
                assert f"{package}/{rel}" in names, f"{folder}/{rel} missing from the wheel"


def test_console_script_and_pytest_plugin_declared(wheel, wheel_names):
    (name,) = [n for n in wheel_names if n.endswith("entry_points.txt")]
    entry_points = wheel.read(name).decode()
    assert "portagpu = portagpu.cli:main" in entry_points
    assert "portagpu = portagpu.pytest_plugin" in entry_points


def test_builtin_backends_are_registered_as_entry_points(wheel, wheel_names):
    """The backend registry finds the four built-ins through the wheel's metadata."""
    (name,) = [n for n in wheel_names if n.endswith("entry_points.txt")]
    entry_points = wheel.read(name).decode()
    section = entry_points.split("[portagpu.backends]")[1].split("[")[0]
    registered = {line.split(" = ")[0]: line.split(" = ")[1] for line in section.split("\n") if " = " in line}
    assert registered == {"cuda": "portagpu.backends.nvidia", "rocm": "portagpu.backends.amd",
                          "mps": "portagpu.backends.apple", "cpu": "portagpu.backends.cpu"}
