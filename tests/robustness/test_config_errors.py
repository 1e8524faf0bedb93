"""Issue 13 items 12 and 16: bad configuration is one error line naming the
file (exit 2), never "internal error"; an empty selection is an error; a
misspelt or mistyped [tool.portagpu.*] table is reported, not ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

SOURCE = "import torch\ntorch.cuda.synchronize()\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(SOURCE)
    return tmp_path


def _one_error_line(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


BAD_TABLES = {
    "exclude '!'": b'[tool.portagpu.lint]\nexclude = ["!"]\n',
    "extend-exclude '!'": b'[tool.portagpu.lint]\nextend-exclude = ["ok/", "!"]\n',
    "per-file-ignores '!'": b'[tool.portagpu.lint]\nper-file-ignores = { "!" = ["PG1"] }\n',
    "not UTF-8": b'[tool.portagpu.lint]\nexclude = ["caf\xe9/"]\n',
    "lint is not a table": b"[tool.portagpu]\nlint = 5\n",
    "misspelt table": b'[tool.portagpu.lnt]\nselect = ["PG1"]\n',
    "empty select": b"[tool.portagpu.lint]\nselect = []\n",
    "select and ignore cancel out": b'[tool.portagpu.lint]\nselect = ["PG101"]\nignore = ["PG101"]\n',
}


@pytest.mark.parametrize("content", BAD_TABLES.values(), ids=BAD_TABLES.keys())
def test_bad_pyproject_is_one_line_naming_the_file(project, run_cli, content):
    (project / "pyproject.toml").write_bytes(content)
    code, _, err = run_cli("lint", "a.py")
    _one_error_line(code, err, str(project / "pyproject.toml"))


def test_misspelt_table_suggests_the_right_one(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.portagpu.lnt]\nselect = ["PG1"]\n')
    _, _, err = run_cli("lint", "a.py")
    assert "tool.portagpu.lnt" in err and "lint" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--select", ""],
        ["--select", ","],
        ["--select", "PG101", "--ignore", "PG101"],
        ["--select", "PG501", "--target", "mps"],
    ],
)
def test_empty_selection_on_the_command_line_is_an_error(project, run_cli, argv):
    code, _, err = run_cli("lint", *argv, "a.py")
    _one_error_line(code, err, "no rule")


@pytest.mark.parametrize(
    "argv", [["--exclude", "!"], ["--extend-exclude", "!"], ["--per-file-ignores", "!:PG1"]]
)
def test_bad_pattern_on_the_command_line(project, run_cli, argv):
    code, _, err = run_cli("lint", *argv, "a.py")
    _one_error_line(code, err, "'!'")


def test_a_bad_gitignore_line_is_skipped_not_fatal(project, run_cli):
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("!\nb.py\n")
    (project / "b.py").write_text(SOURCE)
    code, out, err = run_cli("lint", "--no-cache", ".")
    assert code == 1 and "a.py" in out and "b.py" not in out, err
    assert "internal error" not in err
