"""Several portagpu runs on one tree at once (editors, pre-commit, CI jobs
sharing a checkout): concurrent `--fix` runs fix each file exactly once and
leave it parseable; concurrent cached runs agree and leave a valid cache."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from portagpu.lint.cache import decode

AMP = "import torch\nctx_{i} = torch.cuda.amp.autocast()\n\ndef f_{i}(x, device):\n    return x.cuda()\n"


def _tree(folder: Path, files: int) -> None:
    (folder / "pyproject.toml").write_text("[tool.portagpu.lint]\n")
    for i in range(files):
        (folder / f"m{i:02d}.py").write_text(AMP.format(i=i))


def _start(folder: Path, *argv: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "portagpu", "lint", "-j", "1", *argv, "."],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_concurrent_fix_runs_fix_each_file_once(tmp_path):
    _tree(tmp_path, 12)
    runs = [_start(tmp_path, "--no-cache", "--fix") for _ in range(4)]
    outputs = [run.communicate(timeout=180) for run in runs]
    for i in range(12):
        text = (tmp_path / f"m{i:02d}.py").read_text()
        assert text == AMP.format(i=i).replace(
            "torch.cuda.amp.autocast()", 'torch.amp.autocast("cuda")'
        ).replace("x.cuda()", "x.to(device)"), text
        ast.parse(text)
    for run, (_, err) in zip(runs, outputs, strict=True):
        assert "Traceback" not in err and "internal error" not in err, err
        # a run that lost the race says so and names the file, it never writes over it
        for line in err.splitlines():
            assert "changed on disk" in line or "not written" not in line, line
        assert run.returncode in (0, 1)
    assert not list(tmp_path.glob(".portagpu-*.tmp")), "temporary files left behind"


def test_concurrent_cached_runs_agree_and_leave_a_valid_cache(tmp_path):
    _tree(tmp_path, 12)
    runs = [_start(tmp_path, "--output-format", "json") for _ in range(4)]
    outputs = [run.communicate(timeout=180) for run in runs]
    reports = [json.loads(out) for out, _ in outputs]
    assert all(r == reports[0] for r in reports) and len(reports[0]) == 24
    for path in (tmp_path / ".portagpu_cache").rglob("*.json"):
        data = json.loads(path.read_text())
        if not path.name.startswith("rules-"):
            decode(data)  # raises on a torn or mixed file
    again = _start(tmp_path, "--output-format", "json").communicate(timeout=180)[0]
    assert json.loads(again) == reports[0]
