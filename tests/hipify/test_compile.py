"""--check with the real compilers: hipcc (HIP_PLATFORM=amd) for gfx90a (wave64)
and gfx1030 (wave32), nvcc for the original. Skipped where a compiler is absent.
The compiles of this module run once, side by side, in a module fixture."""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from portagpu.hipify_bridge import translate
from portagpu.hipify_bridge.compile_check import compile_cuda, compile_hip

from portagpu.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "cuda"
needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

WAVE_ASSERT = """
#if defined(__gfx90a__)
static_assert(PORTAGPU_WARP_SIZE == 64, "gfx90a is wave64");
#elif defined(__gfx1030__)
static_assert(PORTAGPU_WARP_SIZE == 32, "gfx1030 is wave32");
#endif
"""


def _without_cub(source: str) -> str:
    source = source.replace("#include <cub/cub.cuh>", "")
    return source[: source.index("__global__ void cub_block_sum")]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, object]:
    """Every hipcc/nvcc run of this module, in parallel (each takes seconds)."""
    if shutil.which("hipcc") is None:
        pytest.skip("hipcc not installed")
    tmp = tmp_path_factory.mktemp("compile")
    warp = translate(_without_cub((CORPUS / "reduce_ballot_cub.cu").read_text()),
                     engine="builtin").text + WAVE_ASSERT
    (tmp / "warp.hip").write_text(warp)
    ptx = translate('__global__ void lane(unsigned* out) { unsigned r; '
                    'asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); *out = r; }\n',
                    engine="builtin").text
    (tmp / "ptx.hip").write_text(ptx)
    jobs = {
        "warp-gfx90a": (compile_hip, str(tmp / "warp.hip"), "gfx90a"),
        "warp-gfx1030": (compile_hip, str(tmp / "warp.hip"), "gfx1030"),
        "ptx-gfx90a": (compile_hip, str(tmp / "ptx.hip"), "gfx90a"),
    }
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {name: pool.submit(fn, *args) for name, (fn, *args) in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


@needs_hipcc
@pytest.mark.parametrize("target", ["gfx90a", "gfx1030"])
def test_warp_code_translation_compiles_with_the_targets_wavefront(compiled, target):
    result = compiled[f"warp-{target}"]
    assert result.status == "ok", result.detail
    assert result.detail == ("wave64" if target == "gfx90a" else "wave32")


@needs_hipcc
def test_inline_ptx_is_named_as_what_fails(compiled):
    result = compiled["ptx-gfx90a"]
    assert result.status == "failed"
    assert "invalid instruction" in result.detail


@needs_hipcc
def test_check_of_the_done_when_file_names_what_blocks_it(tmp_path, capsys, monkeypatch):
    """Warp-32 reduction + 32-bit ballot + cub call: hipCUB is absent here, so the
    check says so and proves everything else compiles for both targets."""
    if os.path.exists("/usr/include/hipcub/hipcub.hpp"):
        pytest.skip("hipCUB is installed: the full file is checkable")
    # nvcc on the cub-heavy original takes ~20 s; test_nvcc_* covers nvcc
    monkeypatch.setenv("PATH", os.path.dirname(shutil.which("hipcc")))
    shutil.copy(CORPUS / "reduce_ballot_cub.cu", tmp_path / "reduce.cu")
    code = main(["hipify", str(tmp_path / "reduce.cu"), "--check", "--format", "json",
                 "--engine", "builtin"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    checks = {c["target"]: c for c in report["files"][0]["sources"][0]["checks"]}
    assert checks["nvcc"]["status"] == "skipped"
    for target in ("gfx90a", "gfx1030"):
        assert checks[target]["status"] == "not-checkable"
        assert "hipcub/hipcub.hpp (hipCUB)" in checks[target]["detail"]
        assert "the rest (without cub_block_sum) compiles" in checks[target]["detail"]


@needs_nvcc
@needs_hipcc
def test_nvcc_and_hipcc_on_an_embedded_kernel(tmp_path, capsys):
    module = tmp_path / "k.py"
    module.write_text(
        'import cupy\nk = cupy.RawKernel(r"""\nextern "C" __global__ void s(const int* p, int* n) {\n'
        '  unsigned b = __ballot_sync(0xffffffff, p[threadIdx.x]);\n'
        '  if ((threadIdx.x & 31) == 0) atomicAdd(n, __popc(b));\n}\n""", "s")\n')
    code = main(["hipify", str(module), "--check", "--targets", "gfx90a", "--format", "json",
                 "--engine", "builtin"])
    report = json.loads(capsys.readouterr().out)
    checks = {c["target"]: c["status"] for c in report["files"][0]["sources"][0]["checks"]}
    assert checks == {"nvcc": "ok", "gfx90a": "ok"}, report
    assert code == 0


def test_compile_reports_skipped_without_compilers(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "/nonexistent")
    (tmp_path / "a.hip").write_text("__global__ void k() {}\n")
    assert compile_hip(str(tmp_path / "a.hip"), "gfx90a").status == "skipped"
    assert compile_cuda(str(tmp_path / "a.hip")).status == "skipped"
