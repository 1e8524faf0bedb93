"""The CUDA C kernels are written once for any warp width: no literal 32-lane
masks, 64-bit ballots, and they compile with nvcc and, after portagpu's hipify,
for a wave64 (gfx90a) and a wave32 (gfx1030) AMD target."""

import os
import re
import shutil
import subprocess
from importlib import resources

import pytest

CUDA_DIR = resources.files("portagpu.kernels") / "cuda"
SOURCES = sorted(p.name for p in CUDA_DIR.iterdir() if p.name.endswith(".cu"))
KERNEL_FILES = {"reduce.cu", "histogram.cu", "scan.cu"}

# What a warp-width-agnostic source never says: 32-bit full masks, lane math
# with 31/32/5, 32-bit ballot results, raw *_sync calls outside warp.cuh.
FORBIDDEN = {
    "32-bit full mask": re.compile(r"0x[fF]{8}\b(?![0-9a-fA-F])"),
    "lane math with 31": re.compile(r"&\s*31\b|%\s*32\b|>>\s*5\b|/\s*32\b"),
    "32-bit ballot": re.compile(r"unsigned(\s+int)?\s+\w+\s*=\s*__ballot"),
    "__popc on a ballot": re.compile(r"__popc\s*\("),
}


def test_the_kernel_files_ship_as_package_data():
    assert KERNEL_FILES <= set(SOURCES)
    assert (CUDA_DIR / "warp.cuh").is_file()


@pytest.mark.parametrize("name", [*SOURCES, "warp.cuh"])
def test_no_32_lane_assumptions(name):
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", (CUDA_DIR / name).read_text(), flags=re.DOTALL)
    for what, pattern in FORBIDDEN.items():
        assert not pattern.search(text), f"{name}: {what}: {pattern.search(text).group(0)!r}"
    if name != "warp.cuh":
        assert not re.search(r"__(shfl\w*|ballot)(_sync)?\s*\(", text), f"{name}: call pg_* helpers"


def test_portagpu_lint_finds_nothing():
    lint = pytest.importorskip("portagpu.lint.engine")
    from portagpu.lint.catalogue import load_catalogue
    from portagpu.lint.model import LintSettings

    rules = [r for r in load_catalogue() if r.id.startswith(("PG5", "PG6"))]
    assert rules, "no CUDA rules in the catalogue"
    for name in [*SOURCES, "warp.cuh"]:
        findings = lint.lint_text((CUDA_DIR / name).read_text(), path=name, language="cuda",
                                  rules=rules, settings=LintSettings())
        assert not findings, [str(f) for f in findings]


def _compile(cmd, cwd):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr[-3000:]}"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("name", sorted(KERNEL_FILES))
def test_compiles_with_nvcc(name, tmp_path):
    _compile(["nvcc", "-c", "-o", str(tmp_path / "k.o"), str(CUDA_DIR / name)], tmp_path)


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")
@pytest.mark.parametrize("name", sorted(KERNEL_FILES))
def test_hipified_source_compiles_for_wave64_and_wave32(name, tmp_path):
    from portagpu.hipify_bridge import translate
    from portagpu.kernels import _cuda

    translation = translate(_cuda.source(name))
    assert not translation.report.unconverted, translation.report.unconverted
    assert not translation.report.warp_rewrites, "the source should need no warp fixes"
    source = tmp_path / name.replace(".cu", ".hip.cpp")
    source.write_text(translation.text)
    # one compile per wavefront size; the device pass must agree with the target's width
    for arch, lanes in (("gfx90a", 64), ("gfx1030", 32)):
        check = f"-DPG_EXPECTED_LANES={lanes}"
        probe = tmp_path / f"probe_{arch}.cpp"
        probe.write_text(source.read_text() + "\n#if defined(__HIP_DEVICE_COMPILE__)\n"
                         "static_assert(PORTAGPU_WARP_SIZE == PG_EXPECTED_LANES, \"warp width\");\n#endif\n")
        env_cmd = ["hipcc", "-std=c++17", "-include", "hip/hip_runtime.h", f"--offload-arch={arch}",
                   check, "-c", "-o", str(tmp_path / f"{arch}.o"), str(probe)]
        done = subprocess.run(env_cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "HIP_PLATFORM": "amd"})
        assert done.returncode == 0, f"{arch}: {done.stderr[-3000:]}"
