"""Issue 13 items 4, 5 and 17 (lint): what `--fix` / `--add-noqa` write.

4: a file saved by someone else during the run is not overwritten.
5: owner and group are kept; a hard-linked file stays linked.
17: a write that fails is reported and never counted as fixed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from portagpu import fileio
from portagpu.lint import runner

FIXABLE = "import torch\nctx = torch.cuda.amp.autocast()\n"
FIXED = 'import torch\nctx = torch.amp.autocast("cuda")\n'
NOQA = "import torch\ntorch.cuda.synchronize()\n"


def _edit_during_the_run(monkeypatch, path: Path, text: str) -> None:
    """The file is saved by an editor while its job runs (after it was read)."""
    real = runner._run_job

    def run_job(job):
        outcome = real(job)
        path.write_text(text)
        return outcome

    monkeypatch.setattr(runner, "_run_job", run_job)


@pytest.mark.parametrize("mode", ["fix", "add_noqa"])
def test_a_file_changed_during_the_run_is_not_overwritten(lint_tree, tmp_path, monkeypatch, mode):
    saved = FIXABLE + "# the user's new line\n" if mode == "fix" else NOQA + "# new\n"
    _edit_during_the_run(monkeypatch, tmp_path / "a.py", saved)
    kwargs = {"fix": True} if mode == "fix" else {"add_noqa_comments": True}
    result = lint_tree({"a.py": FIXABLE if mode == "fix" else NOQA}, **kwargs)
    assert (tmp_path / "a.py").read_text() == saved
    assert any("changed" in e and "a.py" in e for e in result.errors), result.errors
    assert result.fixed == 0 and result.noqa_added == 0 and not result.changed


def test_cli_says_not_fixed_when_the_file_changed(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(FIXABLE)
    _edit_during_the_run(monkeypatch, tmp_path / "a.py", FIXABLE + "x = 1\n")
    code, out, err = run_cli("lint", "--no-cache", "--fix", "a.py")
    assert code == 1
    assert "Fixed" not in out
    assert "a.py" in err and "changed" in err


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_owner_and_group_are_kept(lint_tree, tmp_path):
    path = tmp_path / "a.py"
    path.write_text(FIXABLE)
    os.chown(path, 12345, 23456)
    os.chmod(path, 0o640)
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_paths

    result = lint_paths([path], LintConfig(root=tmp_path, cache=False, jobs=1), fix=True)
    assert result.fixed == 1, result.errors
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)
    assert path.read_text() == FIXED


def test_owner_that_cannot_be_kept_means_an_in_place_write(tmp_path, monkeypatch):
    """Not root: chown to the old owner is refused, so the file is rewritten
    in place (same inode, so same owner) rather than replaced by ours."""
    path = tmp_path / "a.py"
    path.write_text("old\n")
    inode = path.stat().st_ino
    st = os.stat(path)

    class Foreign:  # the file as a stat by another user would show it
        def __init__(self, real):
            self._real = real

        def __getattr__(self, name):
            if name == "st_uid":
                return self._real.st_uid + 1
            return getattr(self._real, name)

    real_stat = os.stat

    def stat_as_seen(p, *a, **k):  # only the file itself belongs to someone else
        st = real_stat(p, *a, **k)
        return Foreign(st) if os.fspath(p) == str(path) else st

    monkeypatch.setattr(fileio.os, "stat", stat_as_seen)
    monkeypatch.setattr(
        fileio.os, "chown", lambda *a, **k: (_ for _ in ()).throw(PermissionError(1, "no"))
    )
    fileio.write_atomic(path, b"new\n")
    assert path.read_text() == "new\n" and real_stat(path).st_ino == inode == st.st_ino


def test_hard_links_stay_linked(lint_tree, tmp_path):
    path = tmp_path / "a.py"
    path.write_text(FIXABLE)
    other = tmp_path / "other_name.txt"
    os.link(path, other)
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_paths

    result = lint_paths([path], LintConfig(root=tmp_path, cache=False, jobs=1), fix=True)
    assert result.fixed == 1, result.errors
    assert path.stat().st_ino == other.stat().st_ino and path.stat().st_nlink == 2
    assert other.read_text() == FIXED


def test_failed_write_is_an_error_not_a_fix(run_cli, tmp_path, monkeypatch):
    """A read-only folder (simulated: root ignores permissions)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(FIXABLE)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr(fileio.tempfile, "mkstemp", refuse)
    monkeypatch.setattr(fileio, "_write_in_place", refuse, raising=False)
    code, out, err = run_cli("lint", "--no-cache", "--fix", "a.py")
    assert code == 1
    assert "Fixed" not in out, out
    assert "a.py" in err and "Permission denied" in err
    assert (tmp_path / "a.py").read_text() == FIXABLE


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_for_real(run_cli, tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "a.py").write_text(FIXABLE)
    folder.chmod(0o555)
    try:
        monkeypatch.chdir(tmp_path)
        code, out, err = run_cli("lint", "--no-cache", "--fix", "ro/a.py")
    finally:
        folder.chmod(0o755)
    assert code == 1 and "Fixed" not in out and "ro/a.py" in err


def test_new_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        fileio.write_atomic(tmp_path / "new.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644
