from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from portagpu.lint.engine import lint_paths
from portagpu.lint.fixes import UnsafeFix, apply_fixes, check_parses, write_atomic
from portagpu.lint.model import Edit, Fix


def test_edits_apply_back_to_front_and_overlaps_wait():
    text = "aaa bbb\nccc\n"
    fixes = [
        Fix("safe", "1", (Edit(1, 1, 1, 4, "XX"),)),
        Fix("safe", "2", (Edit(1, 5, 1, 8, "YYYY"), Edit(2, 1, 2, 4, "Z"))),
        Fix("safe", "3", (Edit(1, 2, 1, 3, "overlaps 1"),)),
    ]
    new, applied = apply_fixes(text, fixes)
    assert new == "XX YYYY\nZ\n" and applied == 2


def test_check_parses_refuses_broken_python():
    check_parses("x = f(1)\n", "a.py", "python")
    with pytest.raises(UnsafeFix):
        check_parses("x = f((1\n", "a.py", "python")


def test_write_atomic_keeps_mode(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("old\n")
    os.chmod(path, 0o750)
    write_atomic(str(path), b"new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]  # no temp file left


def test_fix_then_second_fix_changes_nothing(toy, tmp_path):
    path = tmp_path / "a.py"
    path.write_text("cuda_sync()\nx = 1  # keep me\ncuda_sync(); cuda_sync()\nn = warp32\n")
    first = lint_paths([tmp_path], toy(), fix=True)
    assert first.fixed == 3
    assert path.read_text() == "accel_sync()\nx = 1  # keep me\naccel_sync(); accel_sync()\nn = warp32\n"
    assert [f.code for f in first.findings] == ["TX102"]  # a suggestion is never applied
    before = path.stat().st_mtime_ns
    second = lint_paths([tmp_path], toy(), fix=True)
    assert second.fixed == 0 and second.changed == {} and path.stat().st_mtime_ns == before


def test_diff_mode_writes_nothing(toy, tmp_path):
    path = tmp_path / "a.py"
    path.write_text("cuda_sync()\n")
    result = lint_paths([tmp_path], toy(), fix=True, write=False)
    assert path.read_text() == "cuda_sync()\n"
    assert result.changed == {"a.py": ("cuda_sync()\n", "accel_sync()\n")}


def test_a_fix_that_breaks_the_code_is_refused(toy, tmp_path):
    path = tmp_path / "a.py"
    path.write_text("bad_fix()\n")
    result = lint_paths([tmp_path], toy(), fix=True)
    assert path.read_text() == "bad_fix()\n"
    assert result.errors and "TX103" in result.errors[0] and "not applied" in result.errors[0]
    assert [f.code for f in result.findings] == ["TX103"]


def test_fix_keeps_a_pep263_encoding(toy, tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes("# -*- coding: latin-1 -*-\ns = 'caf\xe9'\ncuda_sync()\n".encode("latin-1"))
    lint_paths([tmp_path], toy(), fix=True)
    assert path.read_bytes() == "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\naccel_sync()\n".encode("latin-1")


def test_add_noqa_baseline(toy, tmp_path):
    path = tmp_path / "a.py"
    path.write_text("cuda_sync()\nn = warp32\n")
    result = lint_paths([tmp_path], toy(), add_noqa_comments=True)
    assert result.noqa_added == 2
    assert path.read_text() == "cuda_sync()  # noqa: TX101\nn = warp32  # noqa: TX102\n"
    assert lint_paths([tmp_path], toy()).findings == []
    again = lint_paths([tmp_path], toy(), add_noqa_comments=True)
    assert again.noqa_added == 0 and Path(path).read_text().count("noqa") == 2
