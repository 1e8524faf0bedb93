"""Helpers for the robustness suite: the real catalogue and checkers, no
cache, one process (unless a test asks for workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portagpu.cli import main
from portagpu.lint.config import LintConfig
from portagpu.lint.engine import lint_paths


@pytest.fixture
def run_cli(capsys):
    """portagpu's CLI in this process: (exit code, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def lint_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Lints files under tmp_path with the real rules: lint_tree({"a.py": b"..."}, fix=True)."""
    monkeypatch.chdir(tmp_path)

    def run(files: dict[str, bytes | str], **kwargs):
        for name, data in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        config = kwargs.pop("config", None) or LintConfig(root=tmp_path, cache=False, jobs=1)
        return lint_paths([tmp_path / n for n in files], config, **kwargs)

    return run
