"""Issue 13 items 6 and 12 (cache): nothing read from a project tree runs
code; --no-cache reads and writes no cache; a damaged cache file is named
and ignored, never an internal error."""

from __future__ import annotations

import builtins
import pickle
from pathlib import Path

import pytest

from portagpu.lint import cache as cache_module
from portagpu.lint import config as config_module

SOURCE = "import torch\ntorch.cuda.synchronize()\n"


class _Planted:
    """Unpickling this creates the marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (builtins.open, (str(self.marker), "w"))


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.portagpu.lint]\ntargets = ["mps"]\n')
    (tmp_path / "a.py").write_text(SOURCE)
    return tmp_path


def _plant_everywhere(folder: Path, marker: Path) -> int:
    planted = 0
    for path in folder.rglob("*"):
        if path.is_file() and path.name not in ("CACHEDIR.TAG", ".gitignore"):
            path.write_bytes(pickle.dumps(_Planted(marker)))
            planted += 1
    return planted


@pytest.mark.parametrize("extra", [[], ["--no-cache"]])
def test_a_planted_cache_runs_nothing(project, run_cli, extra):
    marker = project / "PWNED"
    assert run_cli("lint", "a.py")[0] == 1  # writes the caches
    assert _plant_everywhere(project / ".portagpu_cache", marker) >= 2
    code, out, err = run_cli("lint", *extra, "a.py")
    assert not marker.exists(), "a cache file from the project tree ran code"
    assert code == 1 and "PG101" in out  # still lints correctly
    assert "internal error" not in err


def test_no_cache_reads_and_writes_no_cache(project, run_cli, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("a cache was read under --no-cache")

    monkeypatch.setattr(cache_module.FindingsCache, "_read", forbidden)
    monkeypatch.setattr(config_module, "_read_rules_cache", forbidden, raising=False)
    code, out, _ = run_cli("lint", "--no-cache", "a.py")
    assert code == 1 and "PG101" in out
    assert not (project / ".portagpu_cache").exists()


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[1, 2, 3]",
        b'{"format": 99}',
        b'{"format": 3, "entries": 5, "stats": []}',
        b'{"format": 3, "entries": {"zz": [[1]]}, "stats": {}}',
        b"\xff\xfe",
    ],
)
def test_a_damaged_cache_file_is_named_and_ignored(project, run_cli, content):
    assert run_cli("lint", "a.py")[0] == 1
    files = [
        p for p in (project / ".portagpu_cache").rglob("*.json") if not p.name.startswith("rules-")
    ]
    assert files, "the findings cache is a JSON file"
    for path in files:
        path.write_bytes(content)
    code, out, err = run_cli("lint", "a.py")
    assert code == 1 and "PG101" in out
    assert "internal error" not in err
    if content:
        assert str(files[0].name) in err and "ignored" in err
    # and it heals: the next run is clean
    assert run_cli("lint", "a.py")[2] == ""


def test_cache_round_trip_keeps_findings_and_fixes(project, run_cli):
    (project / "b.py").write_text("import torch\nctx = torch.cuda.amp.autocast()\n")
    first = run_cli("lint", "--format", "json", "a.py", "b.py")
    second = run_cli("lint", "--format", "json", "a.py", "b.py")
    assert first == second and '"applicability": "safe"' in first[1]
