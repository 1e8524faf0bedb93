"""`portagpu hipify`: outputs, --inplace backups, atomic refusal to clobber,
embedded sources (sidecar and literal rewrite), JSON report, bad input."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from portagpu.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "cuda"
ENGINE = ["--engine", "builtin"]  # same result on every machine (no torch import cost)


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    shutil.copy(CORPUS / "reduce_ballot_cub.cu", src / "reduce.cu")
    shutil.copy(CORPUS / "ptx_mma_libs.cu", src / "sub" / "ptx.cu")
    (src / "sub" / "helpers.cuh").write_text(
        "#pragma once\n#define WARP_SIZE 32\n", encoding="utf-8")
    return src


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_files_get_hip_outputs_beside_them(tree, capsys):
    assert main(["hipify", str(tree), *ENGINE]) == 0
    out = capsys.readouterr().out
    assert (tree / "reduce.hip").exists() and (tree / "sub" / "ptx.hip").exists()
    assert (tree / "sub" / "helpers.hip.cuh").exists()
    assert "engine: builtin" in out and "Total: 3 files" in out
    assert "13:3 PG601" in out  # unconverted PTX with its line and column
    hip = (tree / "reduce.hip").read_text(encoding="utf-8")
    assert hip.startswith("// portagpu hipify: generated from reduce.cu")


def test_output_dir_keeps_layout_and_header_names(tree, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["hipify", str(tree), "-o", str(out), "--format", "json", *ENGINE]) == 0
    report = _json(capsys)
    assert (out / "reduce.hip").exists() and (out / "sub" / "helpers.cuh").exists()
    assert report["total"]["files"] == 3 and report["total"]["errors"] == 0
    first = next(f for f in report["files"] if f["path"].endswith("reduce.cu"))
    (source,) = first["sources"]
    assert source["engine"] == "builtin" and source["converted_refs"] >= 2
    assert {w["rule"] for w in source["warp_rewrites"]} >= {"PG501", "PG503", "PG505"}
    assert [u["rule"] for u in source["unconverted"]] == ["PG604"]


def test_inplace_keeps_a_backup_and_refuses_to_lose_it(tree, capsys):
    original = (tree / "reduce.cu").read_bytes()
    assert main(["hipify", str(tree / "reduce.cu"), "--inplace", *ENGINE]) == 0
    assert (tree / "reduce.cu.prehip").read_bytes() == original
    translated = (tree / "reduce.cu").read_text(encoding="utf-8")
    assert "PORTAGPU_FULL_MASK" in translated
    capsys.readouterr()
    # a second run must not overwrite the backup of the real original
    assert main(["hipify", str(tree / "reduce.cu"), "--inplace", *ENGINE]) == 2
    assert "backup reduce.cu.prehip already exists" in capsys.readouterr().out
    assert (tree / "reduce.cu.prehip").read_bytes() == original
    assert (tree / "reduce.cu").read_text(encoding="utf-8") == translated


def test_a_hand_written_hip_file_is_never_overwritten(tree, capsys):
    (tree / "reduce.hip").write_text("// mine\n", encoding="utf-8")
    assert main(["hipify", str(tree / "reduce.cu"), *ENGINE]) == 2
    assert "not written by portagpu hipify" in capsys.readouterr().out
    assert (tree / "reduce.hip").read_text(encoding="utf-8") == "// mine\n"


def test_bad_inputs_are_reported_per_file_and_the_rest_continues(tree, capsys):
    (tree / "latin1.cu").write_bytes(b"// caf\xe9\n__global__ void k() {}\n")
    (tree / "junk.cu").write_text("}}}} ))) @@@ ((( {{{{ ###\n" * 4, encoding="utf-8")
    (tree / "broken.py").write_text("import cupy\ncupy.RawKernel(\n", encoding="utf-8")
    assert main(["hipify", str(tree), str(tree / "missing.cu"), *ENGINE]) == 2
    out = capsys.readouterr().out
    assert "latin1.cu:1: not UTF-8 (byte 0xe9)" in out
    assert "junk.cu:1: not parseable as CUDA C++" in out
    assert "broken.py:2: Python syntax error" in out
    assert "missing.cu: no such file or directory" in out
    assert (tree / "reduce.hip").exists()  # the good files were still translated
    assert not (tree / "latin1.hip").exists() and not (tree / "junk.hip").exists()


def test_missing_engine_is_a_clear_per_file_error(tree, capsys, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert main(["hipify", str(tree / "reduce.cu"), "--engine", "hipify-perl"]) == 2
    assert "hipify-perl is not on PATH" in capsys.readouterr().out
    assert not (tree / "reduce.hip").exists()


PY_MODULE = '''import cupy as cp

# keep this comment and spacing exactly
_SRC = r"""
extern "C" __global__ void red(float* x) {
    float v = x[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    x[0] = v;
}
"""
red = cp.RawKernel(_SRC,   "red")
dyn = cp.RawKernel(f"__global__ void k({T}* x) {{}}", "k")
'''


def test_embedded_sidecar(tmp_path, capsys):
    module = tmp_path / "kern.py"
    module.write_text(PY_MODULE, encoding="utf-8")
    assert main(["hipify", str(module), "--format", "json", *ENGINE]) == 0
    report = _json(capsys)
    sidecar = tmp_path / "kern.RawKernel_L11.hip"
    assert sidecar.exists() and "PORTAGPU_WARP_SIZE / 2" in sidecar.read_text(encoding="utf-8")
    assert module.read_text(encoding="utf-8") == PY_MODULE  # the module is untouched
    (entry,) = report["files"]
    assert any("built at run time (T)" in note for note in entry["notes"])
    # report lines are the Python file's lines
    assert {w["line"] for w in entry["sources"][0]["warp_rewrites"]} == {7}


def test_embedded_rewrite_changes_only_the_literal(tmp_path, capsys):
    module = tmp_path / "kern.py"
    module.write_text(PY_MODULE, encoding="utf-8")
    assert main(["hipify", str(module), "--embedded", "rewrite", "--inplace", *ENGINE]) == 0
    new = module.read_text(encoding="utf-8")
    assert (tmp_path / "kern.py.prehip").read_text(encoding="utf-8") == PY_MODULE
    before, after = PY_MODULE.split('_SRC = r"""')[0], PY_MODULE.split('"""\n', 2)[2]
    assert new.startswith(before) and new.endswith(after)  # formatting elsewhere kept
    tree = ast.parse(new)
    value = next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], "id", "") == "_SRC")
    assert "__shfl_down_sync(PORTAGPU_FULL_MASK, v, o)" in value
    assert "#ifndef PORTAGPU_HIP_COMPAT_H" in value


def test_embedded_rewrite_needs_a_destination(tmp_path, capsys):
    module = tmp_path / "kern.py"
    module.write_text(PY_MODULE, encoding="utf-8")
    assert main(["hipify", str(module), "--embedded", "rewrite", *ENGINE]) == 2
    assert "needs --inplace or -o" in capsys.readouterr().out
    assert module.read_text(encoding="utf-8") == PY_MODULE


def test_cu_cc_files_and_dry_run(tmp_path, capsys):
    src = tmp_path / "op.cu.cc"
    src.write_text("__device__ int f(int p) { return __any_sync(0xffffffff, p); }\n")
    assert main(["hipify", str(src), "--dry-run", *ENGINE]) == 0
    assert not (tmp_path / "op.hip").exists()
    assert "1 warp rewrites" in capsys.readouterr().out
    assert main(["hipify", str(src), *ENGINE]) == 0
    assert "__any_sync(PORTAGPU_FULL_MASK, p)" in (tmp_path / "op.hip").read_text()


def test_finds_what_lint_finds_in_walk_order(tmp_path, capsys):
    """One discovery for lint and hipify: .cu.cpp is CUDA, .gitignore is
    respected, and a folder's files come before its subfolders'."""
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "gen").mkdir()
    kernel = "__device__ int f(int p) { return __any_sync(0xffffffff, p); }\n"
    for name in ("z.cu", "a/k.cu.cpp", "a/b.cuh", "gen/skip.cu"):
        (src / name).write_text(kernel, encoding="utf-8")
    (src / ".gitignore").write_text("gen/\n", encoding="utf-8")
    assert main(["hipify", str(src), *ENGINE, "--format", "json", "--dry-run"]) == 0
    paths = [Path(f["path"]).relative_to(src).as_posix() for f in _json(capsys)["files"]]
    assert paths == ["z.cu", "a/b.cuh", "a/k.cu.cpp"]
    assert main(["hipify", str(src / "a" / "k.cu.cpp"), *ENGINE]) == 0
    assert (src / "a" / "k.hip").exists()
