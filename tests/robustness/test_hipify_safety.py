"""Issue 13 items 3, 7, 17 (hipify) and 18: hipify never replaces an input
without --inplace, keeps a .prehip backup of every file it replaces, skips
its own outputs, treats a symlinked source once and keeps the link, gives
outputs a normal mode, does not hang on a FIFO, and --check that compiled
nothing is not a success."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from portagpu.hipify_bridge import compile_check

from portagpu.cli import main

ENGINE = ["--engine", "builtin"]
KERNEL = """\
__global__ void k(float* v) {
    float x = v[threadIdx.x];
    for (int o = 16; o > 0; o /= 2) x += __shfl_down_sync(0xffffffff, x, o);
    v[threadIdx.x] = x;
}
"""
PY = f'import cupy\nsrc = r"""\n{KERNEL}"""\nk = cupy.RawKernel(src, "k")\n'
HEADER = "#pragma once\n#define WARP 32\n__device__ inline unsigned m() { return __ballot_sync(0xffffffff, 1); }\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(PY)
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "w.cuh").write_text(HEADER)
    return tmp_path


def _hipify(capsys, *argv) -> tuple[int, str, str]:
    code = main(["hipify", *map(str, argv), *ENGINE])
    out, err = capsys.readouterr()
    return code, out, err


def test_output_over_an_input_is_refused_without_inplace(tree, capsys):
    before = {p.name: p.read_bytes() for p in tree.iterdir()}
    code, out, _ = _hipify(capsys, ".", "-o", ".", "--embedded", "rewrite")
    assert code == 2
    assert "would replace an input" in out
    for name, data in before.items():
        assert (tree / name).read_bytes() == data, f"{name} was overwritten"
    assert not list(tree.glob("*.prehip"))


@pytest.mark.parametrize("name", ["m.py", "k.cu", "w.cuh"])
def test_inplace_keeps_a_backup_of_every_kind_of_file(tree, capsys, name):
    original = (tree / name).read_bytes()
    code, out, _ = _hipify(capsys, name, "--inplace", "--embedded", "rewrite")
    assert code == 0, out
    assert (tree / f"{name}.prehip").read_bytes() == original
    assert (tree / name).read_bytes() != original


def test_own_outputs_are_not_translated_again(tree, capsys):
    assert _hipify(capsys, ".")[0] == 0
    assert (tree / "w.hip.cuh").exists() and (tree / "k.hip").exists()
    first = sorted(p.name for p in tree.iterdir())
    code, out, _ = _hipify(capsys, ".")
    assert code == 0, out
    assert sorted(p.name for p in tree.iterdir()) == first  # no w.hip.hip.cuh
    assert "w.hip.cuh ->" not in out


def test_symlinked_source_translated_once_and_link_kept(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real.cu").write_text(KERNEL)
    (tmp_path / "link.cu").symlink_to("real.cu")
    code, out, _ = _hipify(capsys, ".", "real.cu", "--inplace")
    assert code == 0, out
    assert (tmp_path / "link.cu").is_symlink() and os.readlink(tmp_path / "link.cu") == "real.cu"
    assert "Total: 1 files, 1 sources" in out, out  # one source, one translation
    assert len(list(tmp_path.glob("*.prehip"))) == 1
    text = (tmp_path / "real.cu").read_text()
    assert text.count("portagpu hipify: generated") == 1


def test_outputs_follow_the_source_mode_not_0600(tree, capsys):
    os.chmod(tree / "k.cu", 0o644)
    old = os.umask(0o022)
    try:
        assert _hipify(capsys, "k.cu", "m.py")[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tree / "k.hip").stat().st_mode) == 0o644
    sidecar = next(tree.glob("m.RawKernel_L*.hip"))
    assert stat.S_IMODE(sidecar.stat().st_mode) == 0o644


def _run_with_timeout(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "portagpu", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["pipe.cu", "pipe.py"])
def test_a_fifo_is_a_diagnostic_not_a_hang(tmp_path, name):
    os.mkfifo(tmp_path / name)
    (tmp_path / "k.cu").write_text(KERNEL)
    for argv in (
        ["hipify", ".", *ENGINE, "--dry-run"],
        ["hipify", name, *ENGINE, "--dry-run"],
        ["lint", "--no-cache", "."],
        ["lint", "--no-cache", name],
    ):
        done = _run_with_timeout(argv, tmp_path)
        shown = done.stdout + done.stderr
        assert name in shown and "not a regular file" in shown, (argv, shown)
        assert "Traceback" not in shown


def test_check_that_compiled_nothing_is_not_a_success(tree, capsys, monkeypatch):
    monkeypatch.setattr(compile_check.shutil, "which", lambda name, *a, **k: None)
    code, out, err = _hipify(capsys, "k.cu", "--check", "--dry-run")
    assert code != 0 and "neither nvcc nor hipcc" in err
    code, out, err = _hipify(capsys, "k.cu", "--check", "--dry-run", "--allow-skip")
    assert code == 0 and "skipped" in out


@pytest.mark.parametrize("where", ["a_file", "missing/deeper"])
def test_output_folder_is_checked_before_anything_is_written(tree, capsys, where):
    (tree / "a_file").write_text("not a folder")
    code, _, err = _hipify(capsys, ".", "-o", where)
    if where == "a_file":
        assert code == 2 and "a_file" in err and "not a folder" in err
        assert not list(tree.glob("*.hip")) and not list(tree.glob("*.hip.cuh"))
    else:  # a new folder is fine: it is created
        assert code == 0 and (tree / "missing" / "deeper" / "k.hip").exists()
