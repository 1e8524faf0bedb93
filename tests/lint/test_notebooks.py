"""Jupyter notebooks: code cells linted as one module, magics skipped,
findings at `cell N:line` (and at the .ipynb line for SARIF/GitHub), --fix and
--add-noqa keep the file a valid notebook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from portagpu.cli import main
from portagpu.lint.config import LintConfig
from portagpu.lint.engine import lint_paths
from portagpu.lint.notebook import unwrap


def _cell(kind: str, source: str) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(*cells: tuple[str, str], ascii: bool = False) -> str:
    doc = {
        "cells": [_cell(kind, src) for kind, src in cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(doc, indent=1, ensure_ascii=ascii) + "\n"  # nbformat's own layout


CELLS = (
    ("markdown", "# Training on the GPU\nRuns `nvidia-smi` first.\n"),
    ("code", "!nvidia-smi\n%pip install -q torch\nimport torch\n"),
    ("code", "if True:\n    !ls /data\nfiles = !ls\nx = torch.ones(3).cuda()\n"),
    ("code", "%%bash\necho cuda > /tmp/device\n"),
    ("code", "%%time\ny = x.to('cuda')\nprint('énergie', torch.cuda.current_device())\n"),
)


def _lint(path: Path, *args: str, capsys) -> tuple[int, str]:
    code = main(["lint", "--no-cache", *args, str(path)])
    return code, capsys.readouterr().out


def test_cells_are_one_module_and_findings_name_cell_and_line(tmp_path, capsys) -> None:
    nb = tmp_path / "train.ipynb"
    nb.write_text(_notebook(*CELLS), encoding="utf-8")
    code, out = _lint(nb, "--select", "PG101,PG102,PG202", capsys=capsys)
    assert code == 1
    lines = [line for line in out.splitlines() if "PG" in line]
    # import torch in cell 2 resolves torch.cuda in cell 5; magics and %%bash are skipped
    assert [line.split(": ", 1)[0].split("train.ipynb:", 1)[1] for line in lines] == [
        "cell 3:4:5",
        "cell 5:2:5",
        "cell 5:3:18",
    ]
    assert "PG202" not in out  # `!nvidia-smi` is a magic, not Python


def test_json_positions_are_the_notebook_file_lines(tmp_path) -> None:
    text = _notebook(*CELLS)
    nb = tmp_path / "train.ipynb"
    nb.write_text(text, encoding="utf-8")
    config = LintConfig(root=tmp_path, select=("PG102",), cache=False, jobs=1)
    findings = lint_paths([nb], config).findings
    raw = text.split("\n")
    cells = [c for _, c in CELLS]
    for f in findings:
        number, line, col = f.cell
        code_line = cells[number - 1].splitlines()[line - 1]
        # the file position is the same code, inside the JSON string holding that cell line
        assert raw[f.line - 1][f.col - 1 :].startswith(code_line[col - 1 : col + 5])
    assert {f.cell for f in findings} == {(3, 4, 5), (5, 2, 5)}


@pytest.mark.parametrize("ascii", [False, True])
def test_fix_writes_a_valid_notebook_and_is_stable(tmp_path, ascii) -> None:
    source = "import torch\ndef step(x, device):\n    s = 'énergie \"q\"'\n    with torch.cuda.amp.autocast():\n        return x.cuda(), s\n"
    nb = tmp_path / "fix.ipynb"
    nb.write_text(_notebook(("code", source), ascii=ascii), encoding="utf-8")
    config = LintConfig(root=tmp_path, select=("PG102", "PG104"), cache=False, jobs=1)
    first = lint_paths([nb], config, fix=True)
    assert not first.errors and first.fixed == 2
    doc = json.loads(nb.read_text(encoding="utf-8"))  # still valid JSON
    fixed = "".join(doc["cells"][0]["source"])
    assert fixed == source.replace(
        "torch.cuda.amp.autocast()", 'torch.amp.autocast("cuda")'
    ).replace("x.cuda()", "x.to(device)")
    assert doc["nbformat"] == 4 and doc["cells"][0]["outputs"] == []
    second = lint_paths([nb], config, fix=True)
    assert second.fixed == 0 and second.changed == {}


def test_a_cell_that_does_not_parse_is_one_pg901_and_the_rest_is_linted(tmp_path, capsys) -> None:
    nb = tmp_path / "broken.ipynb"
    nb.write_text(
        _notebook(
            ("code", "import torch\n"),
            ("code", "print 'py2'\n"),
            ("code", "z = torch.zeros(2).cuda()\n"),
        ),
        encoding="utf-8",
    )
    _, out = _lint(nb, capsys=capsys)
    assert "cell 2:1:1: PG901" in out and "cell 2: SyntaxError" in out
    assert "cell 3:1:" in out and "PG102" in out


def test_not_a_notebook_is_one_pg901(tmp_path, capsys) -> None:
    nb = tmp_path / "bad.ipynb"
    nb.write_text('{"cells": [torch.cuda', encoding="utf-8")
    code, out = _lint(nb, capsys=capsys)
    assert code == 1 and "PG901" in out and "not a Jupyter notebook" in out


def test_noqa_in_a_cell_and_add_noqa(tmp_path, capsys) -> None:
    nb = tmp_path / "q.ipynb"
    nb.write_text(
        _notebook(
            (
                "code",
                "import torch\na = torch.ones(1).cuda()  # noqa: PG102\nb = torch.ones(1).cuda()\n",
            )
        ),
        encoding="utf-8",
    )
    _, out = _lint(nb, "--select", "PG102", capsys=capsys)
    assert out.count("PG102") == 1 and "cell 1:3:" in out
    assert main(["lint", "--no-cache", "--select", "PG102", "--add-noqa", str(nb)]) == 0
    capsys.readouterr()
    doc = json.loads(nb.read_text(encoding="utf-8"))
    assert doc["cells"][0]["source"][2] == "b = torch.ones(1).cuda()  # noqa: PG102\n"
    assert main(["lint", "--no-cache", "--select", "PG102", str(nb)]) == 0


def test_unwrap_maps_every_code_line_and_replaces_magics() -> None:
    book = unwrap(_notebook(*CELLS))
    module = book.text.splitlines()
    assert module[0] == "pass" and module[1] == "pass"  # !nvidia-smi, %pip
    assert module[4] == "    pass"  # an indented magic keeps the block valid
    assert module[5] == "pass"  # files = !ls
    assert all(place is not None for place in book.places)


def test_discovery_finds_notebooks(tmp_path, monkeypatch) -> None:
    from portagpu.lint.discovery import Candidate, discover

    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "a.ipynb").write_text(_notebook(("code", "x = 1\n")))
    (tmp_path / "nb" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "nb" / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    found = [i for i in discover(["."], root=tmp_path) if isinstance(i, Candidate)]
    assert [(Path(i.path).as_posix(), i.language) for i in found] == [("nb/a.ipynb", "python")]
