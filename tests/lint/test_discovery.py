"""File discovery and the PG9xx diagnostics for files that cannot be linted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from portagpu.lint.discovery import Candidate, Problem, discover
from portagpu.lint.engine import lint_paths
from portagpu.lint.source import CXX


def _names(items) -> list[str]:
    return sorted(Path(i.path).as_posix() for i in items if isinstance(i, Candidate))


def _touch(root: Path, *names: str, text: str = "cuda_sync()\n") -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_languages_gitignore_exclude_and_default_dirs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("local.py\n")
    _touch(
        tmp_path,
        "a.py", "k.cu", "k.cuh", "notes.txt", "generated/g.py", "x_pb2.py",
        "sub/local.py", "sub/kept.py", "third_party/t.py", ".venv/v.py", "node_modules/n.py",
    )
    items = list(discover(["."], root=tmp_path, exclude=["third_party/"]))
    assert _names(items) == ["a.py", "k.cu", "k.cuh", "sub/kept.py"]
    languages = {Path(i.path).name: i.language for i in items}
    assert languages["k.cu"] == "cuda" and languages["a.py"] == "python"
    # --respect-gitignore off: the ignored files come back, the excludes do not
    items = list(discover(["."], root=tmp_path, exclude=["third_party/"], respect_gitignore=False))
    assert "generated/g.py" in _names(items) and "third_party/t.py" not in _names(items)


def test_cuda_sources_named_for_cpp_builds_are_cuda_and_plain_cc_is_sniffed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path, "ops/gelu.cu.cc", "ops/scan.cu.cpp", "ops/host.cc", "ops/host.cpp")
    items = list(discover(["."], root=tmp_path))
    assert _names(items) == ["ops/gelu.cu.cc", "ops/host.cc", "ops/host.cpp", "ops/scan.cu.cpp"]
    languages = {i.path.replace(os.sep, "/"): i.language for i in items if isinstance(i, Candidate)}
    assert languages["ops/gelu.cu.cc"] == languages["ops/scan.cu.cpp"] == "cuda"
    # plain C++ is read before it is linted: CUDA when it calls CUDA, else nothing
    assert languages["ops/host.cc"] == languages["ops/host.cpp"] == CXX
    # named on the command line it is the same, never Python
    assert [i.language for i in discover(["ops/host.cpp"], root=tmp_path)] == [CXX]


def test_explicit_file_is_linted_and_listed_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path, "a.py")
    items = list(discover(["a.py", ".", str(tmp_path / "a.py")], root=tmp_path))
    assert _names(items) == ["a.py"]


def test_a_named_dependency_list_is_read_as_one_whatever_its_name(tmp_path, monkeypatch):
    """A requirements file under another name (misspelt, a pixi.toml) named
    on the command line is a dependency list: its pins are checked, and it is
    never parsed as Python (that was a PG901). In a folder walk it is skipped."""
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path, "requirments.txt", text="torch==2.1.0+cu118\ncupy-cuda11x\nnumpy\n")
    _touch(tmp_path, "tool", text="print('a script with no suffix')\n")
    languages = {i.path: i.language for i in discover(["requirments.txt", "tool"], root=tmp_path)}
    assert languages == {"requirments.txt": "deps", "tool": "python"}
    assert _names(discover(["."], root=tmp_path)) == []
    codes = [f.code for f in lint_paths(["requirments.txt"]).findings]
    assert codes and "PG901" not in codes and set(codes) == {"PG308"}


def test_force_exclude_applies_to_named_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("gen_*.py\n")
    _touch(tmp_path, "vendor/v.py", "gen_x.py", "a.py")
    named = ["vendor/v.py", "gen_x.py", "a.py"]
    assert _names(discover(named, root=tmp_path, exclude=["vendor/"])) == ["a.py", "gen_x.py", "vendor/v.py"]
    assert _names(discover(named, root=tmp_path, exclude=["vendor/"], force_exclude=True)) == ["a.py"]


def test_named_folder_is_linted_even_if_config_excludes_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path, "demo/app.py", "demo/sub/k.cu", "demo/.venv/v.py", "other.py")
    assert _names(discover(["demo"], root=tmp_path, exclude=["demo/"])) == ["demo/app.py", "demo/sub/k.cu"]
    assert _names(discover(["demo"], root=tmp_path, exclude=["demo/"], force_exclude=True)) == []
    # walking the project still honours the exclusion
    assert _names(discover(["."], root=tmp_path, exclude=["demo/"])) == ["other.py"]


def test_symlink_loops_are_one_diagnostic_each(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path, "pkg/a.py")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "again")  # dir loop
    os.symlink(tmp_path / "self.py", tmp_path / "self.py")  # link to itself
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    items = list(discover(["."], root=tmp_path))
    problems = sorted((Path(p.path).as_posix(), p.code) for p in items if isinstance(p, Problem))
    assert problems == [("dangling.py", "PG902"), ("pkg/again", "PG906"), ("self.py", "PG906")]
    assert _names(items) == ["pkg/a.py"]


def test_bad_files_give_one_diagnostic_each_and_the_run_goes_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin1.py").write_bytes("s = 'caf\xe9'\n".encode("latin-1"))
    (tmp_path / "declared.py").write_bytes("# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n".encode("latin-1"))
    (tmp_path / "nul.py").write_bytes(b"x = 1\n\0\0\0")
    (tmp_path / "py2.py").write_text("print 'hello'\n")
    (tmp_path / "huge.py").write_bytes(b"# " + b"x" * (10 * 1024 * 1024 + 10) + b"\n")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfx = 1\n")
    (tmp_path / "good.py").write_text("x = 1\n")
    result = lint_paths([tmp_path], _meta_only(tmp_path))
    got = sorted((Path(f.path).name, f.code) for f in result.findings)
    assert got == [("huge.py", "PG905"), ("latin1.py", "PG903"), ("nul.py", "PG904")]
    # PG901 needs a parse, which the pre-scan skips for files without GPU tokens
    (tmp_path / "py2.py").write_text("print 'hello'\nimport torch\ntorch.cuda.synchronize()\n")
    result = lint_paths([tmp_path / "py2.py"], _meta_only(tmp_path, prescan_token=True))
    assert [f.code for f in result.findings] == ["PG901"]


def test_unreadable_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path, "a.py", "b.py")
    real_open = open

    def fake_open(path, *args, **kwargs):
        if str(path).endswith("a.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    real_os_open = os.open

    def fake_os_open(path, *args, **kwargs):  # sources are read with os.open (FIFO-safe)
        if str(path).endswith("a.py"):
            raise PermissionError(13, "Permission denied")
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)
    result = lint_paths([tmp_path], _meta_only(tmp_path))
    assert [(Path(f.path).name, f.code) for f in result.findings] == [("a.py", "PG902")]
    assert "Permission denied" in result.findings[0].message


def _meta_only(root: Path, prescan_token: bool = False):
    from portagpu.lint.config import LintConfig

    if prescan_token:
        # a toy rule with a token so the file is parsed (and fails to)
        rules = root / "rules.yaml"
        rules.write_text(
            "rules:\n  - {id: TX901, name: toy, message: m, why: w, replacement: r, checker: toy, tokens: [torch]}\n"
        )
        return LintConfig(root=root, select=("PG9", "TX"), extend_rules=(str(rules),), cache=False, jobs=1)
    return LintConfig(root=root, select=("PG9",), cache=False, jobs=1)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_unreadable_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path, "locked/a.py")
    real_scandir = os.scandir

    def fake_scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", fake_scandir)
    items = list(discover(["."], root=tmp_path))
    assert [(Path(p.path).name, p.code) for p in items if isinstance(p, Problem)] == [("locked", "PG902")]
