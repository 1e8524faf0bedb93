"""Issue 13 item 21: the flags a ruff user types work the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

SYNC = "import torch\ntorch.cuda.synchronize()\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(SYNC)
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "b.py").write_text(SYNC)
    return tmp_path


def _paths(out: str) -> set[str]:
    return {line.split(":", 1)[0] for line in out.splitlines() if ": PG" in line}


def test_output_format_with_format_kept_as_an_alias(project, run_cli):
    new = run_cli("lint", "--no-cache", "--output-format", "json", "a.py")
    old = run_cli("lint", "--no-cache", "--format", "json", "a.py")
    assert new == old and new[1].lstrip().startswith("[")


def test_isolated_ignores_every_configuration_file(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.portagpu.lint]\nselect = ["PG9"]\n')
    assert run_cli("lint", "--no-cache", "a.py")[0] == 0
    code, out, _ = run_cli("lint", "--no-cache", "--isolated", "a.py")
    assert code == 1 and "PG101" in out
    (project / "pyproject.toml").write_text("[tool.portagpu.lnt]\n")  # broken, and not read
    assert run_cli("lint", "--no-cache", "--isolated", "a.py")[0] == 1


def test_unsafe_fixes_apply_suggestions_only_when_asked(project, run_cli):
    scaler = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"  # a suggestion with an edit
    (project / "s.py").write_text(scaler)
    code, out, _ = run_cli("lint", "--no-cache", "--fix", "s.py")
    assert (project / "s.py").read_text() == scaler and code == 1
    assert "--unsafe-fixes" in out  # says that a fix is there to be had
    code, out, err = run_cli("lint", "--no-cache", "--fix", "--unsafe-fixes", "s.py")
    assert (project / "s.py").read_text() == scaler.replace(
        "torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")'
    ), err
    assert code == 0 and "Fixed 1" in out


def test_exclude_replaces_and_extend_exclude_adds(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.portagpu.lint]\nexclude = ["a.py"]\n')
    assert _paths(run_cli("lint", "--no-cache", ".")[1]) == {"gen/b.py"}
    assert _paths(run_cli("lint", "--no-cache", "--exclude", "gen/", ".")[1]) == {"a.py"}
    assert _paths(run_cli("lint", "--no-cache", "--extend-exclude", "gen/", ".")[1]) == set()


def test_cli_patterns_are_relative_to_the_current_folder(project, run_cli, monkeypatch):
    (project / "pyproject.toml").write_text("[tool.portagpu.lint]\n")
    (project / "gen" / "sub").mkdir()
    (project / "gen" / "sub" / "c.py").write_text(SYNC)
    monkeypatch.chdir(project / "gen")
    out = run_cli("lint", "--no-cache", "--exclude", "/sub", ".")[1]
    assert _paths(out) == {"b.py"}


def test_per_file_ignores_on_the_command_line(project, run_cli):
    out = run_cli("lint", "--no-cache", "--per-file-ignores", "gen/*:PG101", ".")[1]
    assert _paths(out) == {"a.py"}
    (project / "pyproject.toml").write_text(
        '[tool.portagpu.lint]\nper-file-ignores = { "a.py" = ["PG1"] }\n'
    )
    assert _paths(run_cli("lint", "--no-cache", ".")[1]) == {"gen/b.py"}
    # the command line replaces the file's table; --extend-per-file-ignores adds to it
    assert _paths(run_cli("lint", "--no-cache", "--per-file-ignores", "gen/*:PG1", ".")[1]) == {
        "a.py"
    }
    out = run_cli("lint", "--no-cache", "--extend-per-file-ignores", "gen/*:PG1", ".")[1]
    assert _paths(out) == set()


def test_per_file_ignores_needs_pattern_and_codes(project, run_cli):
    code, _, err = run_cli("lint", "--no-cache", "--per-file-ignores", "gen/*", ".")
    assert code == 2 and "PATTERN:CODES" in err


@pytest.mark.parametrize("report", ["missing/r.json", "gen"])
def test_report_path_is_checked_before_anything_is_written(project, run_cli, report):
    (project / "c.py").write_text("import torch\nctx = torch.cuda.amp.autocast()\n")
    code, _, err = run_cli("lint", "--no-cache", "--fix", "-o", report, "c.py")
    assert code == 2 and report in err and "internal error" not in err
    assert "torch.cuda.amp" in (project / "c.py").read_text()  # not fixed
