"""`portagpu lint`, `portagpu rules` and `portagpu rule` end to end (toy rules)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from portagpu.cli import main

SCHEMA = Path(__file__).with_name("sarif-schema-2.1.0.json")


@pytest.fixture
def project(toy, tmp_path: Path) -> Path:
    toy()  # installs the toy checker and writes toy_rules.yaml
    (tmp_path / "pyproject.toml").write_text(
        '[tool.portagpu.lint]\nselect = ["TX", "PG9"]\nextend-rules = ["toy_rules.yaml"]\n'
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("import x\ncuda_sync()\nn = warp32\n")
    (tmp_path / "src" / "clean.py").write_text("accel_sync()\n")
    return tmp_path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["lint", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output_and_exit_codes(project, capsys):
    code, out, _ = _run(capsys, "src")
    assert code == 1
    assert out.splitlines()[:2] == [
        "src/a.py:2:1: TX101 [*] `cuda_sync()` is CUDA-only",
        "src/a.py:3:5: TX102 `warp32` assumes 32 lanes",
    ]
    assert "\033[" not in out  # not a TTY: no colour
    assert _run(capsys, "src/clean.py")[0] == 0
    assert _run(capsys, "src", "--exit-zero")[0] == 0
    assert _run(capsys, "src", "--target", "rocm")[1].count("TX101") == 0


def test_usage_and_config_errors_exit_2_with_one_line(project, capsys):
    code, _, err = _run(capsys, "src", "--select", "TX999")
    assert code == 2 and "TX999" in err and "Traceback" not in err
    code, _, err = _run(capsys, "missing_dir")
    assert code == 2 and "missing_dir" in err
    (project / "pyproject.toml").write_text("[tool.portagpu.lint]\nselcet = []\n")
    code, _, err = _run(capsys, "src")
    assert code == 2 and str(project / "pyproject.toml") in err and len(err.strip().splitlines()) == 1


def test_json_output(project, capsys):
    code, out, _ = _run(capsys, "src", "--format", "json")
    data = json.loads(out)
    assert code == 1 and [d["code"] for d in data] == ["TX101", "TX102"]
    first = data[0]
    assert {k: first[k] for k in ("path", "line", "column", "end_line", "end_column", "severity")} == {
        "path": "src/a.py", "line": 2, "column": 1, "end_line": 2, "end_column": 12, "severity": "warning",
    }
    assert first["fix"]["applicability"] == "safe"
    assert first["fix"]["edits"][0]["content"] == "accel_sync()"
    assert data[1]["fix"]["applicability"] == "suggestion"


def test_sarif_validates_against_the_official_schema(project, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    (project / "src" / "broken.py").write_bytes(b"x = 1\0")
    code, out, _ = _run(capsys, "src", "--format", "sarif")
    log = json.loads(out)
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(log), key=str)
    assert not errors, errors[0]
    results = log["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["PG904", "TX101", "TX102"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True
    region = next(r for r in results if r["ruleId"] == "TX101")["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 12}


def test_sarif_reports_refused_fixes_as_notifications(project, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    from portagpu.lint.report import format_sarif

    log = json.loads(format_sarif([], (), ["src/a.py: fix for TX103 not applied: it does not parse"]))
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "TX103" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_github_and_grouped_formats(project, capsys):
    out = _run(capsys, "src", "--format", "github")[1]
    assert out.splitlines()[0].startswith("::warning file=src/a.py,line=2,col=1,endLine=2,endColumn=12,")
    assert "::error file=src/a.py,line=3" in out
    out = _run(capsys, "src", "--format", "grouped")[1]
    assert out.splitlines()[0] == "src/a.py:" and out.splitlines()[1].startswith("  2:1 TX101")


def test_statistics_inventory_with_target_status(project, capsys):
    out = _run(capsys, "src", "--statistics")[1]
    header, *rows = out.splitlines()
    assert header.split() == ["count", "code", "name", "files", "rocm", "mps", "cpu", "fixable", "most", "used"]
    assert rows[0].split()[:7] == ["1", "TX101", "toy-cuda-sync", "1", "ok", "breaks", "breaks"]
    assert rows[0].endswith("[*] 1    cuda_sync() (1)")
    data = json.loads(_run(capsys, "src", "--statistics", "--format", "json", "--target", "rocm")[1])
    assert data == [
        {
            "code": "TX102", "name": "toy-warp32", "count": 1, "fixable": 0,
            "status": {"rocm": "breaks"}, "files": 1, "apis": {"warp32": 1},
        }
    ]


def test_fix_diff_and_show_fixes(project, capsys):
    source = project / "src" / "a.py"
    code, out, _ = _run(capsys, "src", "--diff")
    assert code == 1 and "-cuda_sync()\n+accel_sync()" in out and "--- a/src/a.py" in out
    assert "cuda_sync()" in source.read_text()
    out = _run(capsys, "src", "--show-fixes")[1]
    assert "fix: replace with `accel_sync()`" in out and "suggestion: replace with `warp_size()`" in out
    code, out, _ = _run(capsys, "src", "--fix", "--select", "TX101")
    assert code == 0 and "Fixed 1 finding(s)" in out
    assert source.read_text() == "import x\naccel_sync()\nn = warp32\n"
    # only a suggestion is left: --diff has nothing to show, --fix nothing to do
    assert _run(capsys, "src", "--diff") == (0, "", "Would fix 0 finding(s) in 0 file(s).\n")
    assert _run(capsys, "src", "--fix")[0] == 1 and source.read_text().endswith("n = warp32\n")


def test_add_noqa_then_clean(project, capsys):
    code, _, err = _run(capsys, "src", "--add-noqa")
    assert code == 0 and "Added 2 noqa" in err
    assert _run(capsys, "src")[0] == 0
    assert _run(capsys, "src", "--add-noqa")[2].startswith("Added 0")


def test_output_file(project, capsys, tmp_path):
    target = tmp_path / "report.json"
    code, out, _ = _run(capsys, "src", "--format", "json", "-o", str(target))
    assert code == 1 and out == "" and len(json.loads(target.read_text())) == 2


def test_rules_listing_and_rule_page(capsys):
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    assert listing.splitlines()[0].split()[:2] == ["code", "name"]
    assert any(line.startswith("PG901 ") for line in listing.splitlines())
    assert main(["rule", "PG901"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("# PG901 syntax-error") and "## Why" in page and "## Flagged" in page
    assert "print 'hello from python 2'" in page
    assert main(["rule", "syntax-error", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "PG901"
    assert main(["rule", "PG000"]) == 2
    assert "unknown rule" in capsys.readouterr().err
    # a rule kept to some Python sources says which (PG308: setup.py)
    assert main(["rule", "PG308"]) == 0
    assert "Reads only these Python sources: setup.py." in capsys.readouterr().out
    assert main(["rule", "PG308", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["only_files"] == ["setup.py"]


def test_colour_only_when_asked_and_no_progress_off_a_tty(project, capsys, monkeypatch):
    code, out, err = _run(capsys, "src")
    assert "\033[" not in out and err == ""  # no colour, no progress line, no warning
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = _run(capsys, "src")[1]
    assert "\033[1;31mTX101\033[0m" in out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in _run(capsys, "src")[1]
    assert "\033[" not in _run(capsys, "src", "--format", "json")[1]


def test_an_internal_error_exits_2_with_one_line(project, capsys, monkeypatch):
    import portagpu.lint.engine as engine

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "lint_paths", broken)
    code, out, err = _run(capsys, "src")
    assert code == 2 and err.strip() == "portagpu: internal error: RuntimeError: boom (PORTAGPU_DEBUG=1 shows where)"


def test_stdin_filename(project, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("x = 1\ncuda_sync()\n"))
    code, out, err = _run(capsys, "--stdin-filename", "src/new.py")
    # the summary follows, as for files (and as ruff prints it for stdin)
    assert code == 1 and out.splitlines()[0] == "src/new.py:2:1: TX101 [*] `cuda_sync()` is CUDA-only"
    assert out.splitlines()[1] == "Found 1 finding(s) in 1 file(s)."
    monkeypatch.setattr("sys.stdin", io.StringIO("x = 1\ncuda_sync()\nn = warp32\n"))
    code, out, err = _run(capsys, "--stdin-filename", "src/new.py", "--fix")
    assert out == "x = 1\naccel_sync()\nn = warp32\n" and "TX102" in err and code == 1
    assert not (project / "src" / "new.py").exists()  # nothing written
