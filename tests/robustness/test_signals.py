"""Issue 13 items 8 and 9: Ctrl-C stops `portagpu lint` within a second with
exit 130 and no orphan workers; the caller of lint_paths keeps its SIGINT
handler; workers die with their parent when it is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from portagpu.lint.config import LintConfig
from portagpu.lint.engine import lint_one, lint_paths

linux_only = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")


def _tree(folder: Path, files: int, lines: int) -> None:
    body = "".join(f"x_{i} = batch[{i}].cuda()\n" for i in range(lines))
    for n in range(files):
        (folder / f"m{n:03d}.py").write_text("import torch\n" + body)


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start_lint(folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "portagpu", "lint", "--no-cache", "-j", "2", "-q", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=folder,  # `-m` puts the cwd on sys.path: never the repo's unmapped portagpu/
        start_new_session=True,  # its own process group, as a terminal gives a job
    )
    deadline = time.monotonic() + 60
    while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.05)
    time.sleep(0.3)  # the workers are parsing now
    return proc


def _wait_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = {p for p in pids if _alive(p)}
        if not left:
            return set()
        time.sleep(0.05)
    return {p for p in pids if _alive(p)}


def _busy_run(folder: Path) -> tuple[subprocess.Popen, set[int]]:
    """A `portagpu lint -j 2` whose workers are parsing now, and their pids."""
    _tree(folder, files=24, lines=6000)
    proc = _start_lint(folder)
    workers = _children(proc.pid)
    assert workers
    return proc, workers


@linux_only
def test_ctrl_c_stops_the_run_fast_with_exit_130_and_no_orphans(tmp_path):
    proc, workers = _busy_run(tmp_path)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    try:
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    took = time.monotonic() - sent
    err = proc.stderr.read().decode()
    assert code == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert took < 1.0 + 1.0, f"took {took:.2f} s"  # 1 s, plus slack for a loaded CI machine
    assert _wait_gone(workers, 2.0) == set(), "orphan workers"


@linux_only
def test_kill_9_of_the_parent_takes_the_workers_with_it(tmp_path):
    proc, workers = _busy_run(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    left = _wait_gone(workers, 3.0)
    for pid in left:  # do not leave them behind whatever the verdict
        os.kill(pid, signal.SIGKILL)
    assert left == set(), "workers outlived their parent"


@pytest.fixture
def keep_sigint():
    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)  # whatever the verdict, the suite keeps Ctrl-C


def test_lint_paths_leaves_the_callers_sigint_handler_alone(tmp_path, keep_sigint):
    _tree(tmp_path, files=10, lines=5)  # enough files for a process pool
    before = signal.getsignal(signal.SIGINT)
    lint_paths([tmp_path], LintConfig(root=tmp_path, cache=False, jobs=2))
    assert signal.getsignal(signal.SIGINT) is before
    lint_paths([tmp_path], LintConfig(root=tmp_path, cache=False, jobs=1))
    assert signal.getsignal(signal.SIGINT) is before
    lint_one(
        "import torch\ntorch.cuda.synchronize()\n", "x.py", LintConfig(root=tmp_path, cache=False)
    )
    assert signal.getsignal(signal.SIGINT) is before
