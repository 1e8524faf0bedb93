"""Character columns, parse failures, and the shape of findings."""

from __future__ import annotations

import pytest

from portagpu.lint.model import ParseFailure


def test_columns_are_characters_not_utf8_bytes(lint) -> None:
    code = "import torch\nx = 'ünïcödé'; torch.cuda.synchronize()\n"
    (finding,) = lint(code, select=("PG101",))
    line = code.splitlines()[1]
    assert finding.line == 2
    assert finding.col == line.index("torch.cuda") + 1
    assert finding.end_col == len(line) + 1


def test_multiline_call_span(lint) -> None:
    code = "import torch\ns = torch.cuda.amp.GradScaler(\n    init_scale=2.0,\n)\n"
    (finding,) = lint(code, select=("PG104",))
    assert (finding.line, finding.col, finding.end_line) == (2, 5, 2)


def test_crlf_line_endings(lint) -> None:
    code = "import torch\r\n\r\ntorch.cuda.synchronize()\r\n"
    (finding,) = lint(code, select=("PG101",))
    assert (finding.line, finding.col) == (3, 1)


@pytest.mark.parametrize(
    "code",
    [
        "print 'python 2'\n",
        "def f(:\n    pass\n",
        "x = 1\0\n",
        "(" * 300 + ")" * 300 + "\n",
    ],
)
def test_unparsable_text_raises_parse_failure(lint, code: str) -> None:
    with pytest.raises(ParseFailure) as info:
        lint(code)
    assert info.value.line >= 1 and info.value.col >= 1
    assert info.value.message


def test_syntax_error_position(lint) -> None:
    with pytest.raises(ParseFailure) as info:
        lint("import torch\n\nx = = 1\n")
    assert info.value.line == 3


def test_only_selected_rules_run(lint) -> None:
    code = "import torch\ntorch.cuda.synchronize()\nx = x.cuda()\n"
    assert {f.code for f in lint(code)} == {"PG101", "PG102"}
    assert {f.code for f in lint(code, select=("PG102",))} == {"PG102"}


def test_file_without_tokens_is_cheap_and_empty(lint) -> None:
    assert lint("import os\nprint(os.getcwd())\n") == []


def test_findings_carry_rule_severity_and_sorted_order(lint, rules) -> None:
    code = "import torch\nx = x.cuda()\ntorch.cuda.synchronize()\n"
    findings = lint(code)
    by_id = {r.id: r for r in rules}
    assert [f.line for f in findings] == sorted(f.line for f in findings)
    assert all(f.severity == by_id[f.code].severity for f in findings)
