"""Issue 13 item 1: one line model (\\r\\n, \\r, \\n) wherever offsets are
computed. `str.splitlines()` also breaks at form feed, U+0085, U+2028, ...
which Python keeps inside a line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portagpu.lines import line_starts, split_lines, strip_ending

# a safe fix (the deprecated autocast, called with no argument)
AMP, AMP_FIXED = "torch.cuda.amp.autocast()", 'torch.amp.autocast("cuda")'
ODD = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("odd", ODD)
def test_split_lines_breaks_only_where_python_does(odd):
    text = f"a = 1 # x{odd}y\r\nb = 2\rc = 3\n{odd}\nd"
    lines = split_lines(text)
    assert lines == [f"a = 1 # x{odd}y", "b = 2", "c = 3", odd, "d"]
    assert "".join(split_lines(text, keepends=True)) == text
    assert len(line_starts(text)) == len(lines)
    assert strip_ending("x\r\n") == ("x", "\r\n") and strip_ending("x\r") == ("x", "\r")


@pytest.mark.parametrize("odd", ["\x0c", "\x85", "\u2028", "\x1c"])
def test_fix_lands_on_its_line_after_an_odd_character(lint_tree, tmp_path: Path, odd):
    text = f"import torch\n# page{odd}one\n\n# page two\nctx = {AMP}\n"
    result = lint_tree({"a.py": text}, fix=True)
    fixed = (tmp_path / "a.py").read_text(encoding="utf-8")
    assert result.fixed == 1, result.errors
    assert fixed == text.replace(AMP, AMP_FIXED)
    ast.parse(fixed)


def test_form_feed_page_break_line(lint_tree, tmp_path: Path):
    text = f"import torch\n\x0c\n# page two\nctx = {AMP}\n"
    lint_tree({"a.py": text}, fix=True)
    assert (tmp_path / "a.py").read_text() == text.replace(AMP, AMP_FIXED)


@pytest.mark.parametrize("odd", ["\x0c", "\u2028", "\x85"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_add_noqa_comment_on_the_finding_line(lint_tree, tmp_path: Path, odd, newline):
    lines = ["import torch", f"# a{odd}b", "x = 1", "torch.cuda.synchronize()", ""]
    text = newline.join(lines)
    result = lint_tree({"b.py": text}, add_noqa_comments=True)
    assert result.noqa_added == 1
    new = (tmp_path / "b.py").read_bytes().decode("utf-8")
    assert split_lines(new)[3] == "torch.cuda.synchronize()  # noqa: PG101"
    assert split_lines(new)[2] == "x = 1"
    assert lint_tree({"b.py": new}).findings == []


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_noqa_is_read_on_the_right_line(lint_tree, newline):
    text = newline.join(["import torch", "# noqa: PG101", "torch.cuda.synchronize()", ""])
    result = lint_tree({"c.py": text})
    assert [(f.code, f.line) for f in result.findings] == [("PG101", 3)]


def test_reported_line_after_a_blanked_block_with_a_form_feed(lint_tree):
    # the top-level helper mentions nothing a rule wants, so it is blanked
    # before parsing; the blanked lines must be counted as Python counts them
    helper = "def helper():\n    # one\x0ctwo\u2028three\n    return 1\n\n"
    text = "import torch\n\n" + helper * 30 + "torch.cuda.synchronize()\n"
    result = lint_tree({"d.py": text})
    expected = text.count("\n")
    assert [(f.code, f.line) for f in result.findings] == [("PG101", expected)]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_cuda_positions_and_noqa_follow_the_same_model(lint_tree, tmp_path: Path, newline):
    lines = [
        "// page\x0cbreak",
        "__global__ void k(float* v) {",
        "    v[0] = __shfl_down_sync(0xffffffff, v[0], 1);",
        "}",
        "",
    ]
    text = newline.join(lines)
    result = lint_tree({"k.cu": text})
    assert {f.line for f in result.findings if f.code == "PG501"} == {3}
    lint_tree({"k.cu": text}, add_noqa_comments=True)
    new = (tmp_path / "k.cu").read_bytes().decode()
    assert "noqa: PG501" in split_lines(new)[2]
    assert newline in new and (newline != "\n" or "\r" not in new)
    assert [f for f in lint_tree({"k.cu": new}).findings if f.code == "PG501"] == []


def test_backslash_continuation_with_cr_endings(lint_tree, tmp_path: Path):
    text = "import torch\rx = 1 + \\\r    torch.cuda.current_device()\r"
    result = lint_tree({"e.py": text}, add_noqa_comments=True)
    assert result.noqa_added == 1
    new = (tmp_path / "e.py").read_bytes().decode()
    assert split_lines(new)[2].endswith("# noqa: PG101")
    ast.parse(new)


EMBEDDED = (
    "import cupy\n# page\x0cbreak \u2028 here\nsrc = r'''\n"
    "__global__ void k(float* v) {\n"
    "    v[0] = __shfl_down_sync(0xffffffff, v[0], 1);\n"
    "}\n'''\nk = cupy.RawKernel(src, 'k')\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_embedded_kernel_positions_after_odd_characters(lint_tree, newline):
    text = EMBEDDED.replace("\n", newline)
    result = lint_tree({"m.py": text})
    hits = [(f.line, f.col) for f in result.findings if f.code == "PG501"]
    assert hits == [(5, 29)], [(f.code, f.line, f.col) for f in result.findings]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_hip_guard_with_a_continued_directive(lint_tree, newline):
    lines = [
        "#if defined(SOMETHING_ELSE) || \\",
        "    defined(__HIP_PLATFORM_AMD__)",
        "__device__ unsigned m() { return __ballot_sync(0xffffffffffffffffull, 1); }",
        "#else",
        "__device__ unsigned m() { return 0; }",
        "#endif",
        "__global__ void k(float* v) { v[0] = __shfl_down_sync(0xffffffff, v[0], 1); }",
        "",
    ]
    result = lint_tree({"g.cu": newline.join(lines)})
    assert sorted({f.line for f in result.findings if f.code.startswith("PG5")}) == [7]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_hipify_rewrite_replaces_the_literal_after_odd_characters(
    tmp_path, monkeypatch, capsys, newline
):
    from portagpu.cli import main

    monkeypatch.chdir(tmp_path)
    text = EMBEDDED.replace("\n", newline)
    (tmp_path / "m.py").write_bytes(text.encode())
    code = main(["hipify", "m.py", "--inplace", "--embedded", "rewrite", "--engine", "builtin"])
    out = capsys.readouterr().out
    assert code == 0, out
    new = (tmp_path / "m.py").read_bytes().decode()
    tree = ast.parse(new)
    assert "PORTAGPU_FULL_MASK" in new and "0xffffffff" not in new
    assert split_lines(new)[:2] == split_lines(text)[:2]  # the lines before the literal untouched
    assert new.endswith(split_lines(text, keepends=True)[-1])
    assert isinstance(tree.body[-1], ast.Assign)
    assert "5:29 PG501" in out  # reported at the Python file's line and column


def test_notebook_cell_lines_follow_the_model(lint_tree):
    import json

    cell = "import torch\n# a\x0cb \u2028 c\ntorch.cuda.synchronize()\n"
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": cell.splitlines(keepends=True)[:0] or [cell],
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    result = lint_tree({"n.ipynb": json.dumps(notebook)})
    codes = [f.code for f in result.findings]
    assert "PG901" not in codes and "PG101" in codes, result.findings


def test_python2_salvage_counts_lines_as_python(lint_tree):
    text = "print 'hello'\n# a\x0cb\u2028c\nimport torch\ntorch.cuda.synchronize()\n"
    result = lint_tree({"old.py": text})
    assert ("PG101", 4) in [(f.code, f.line) for f in result.findings], result.findings


@given(st.lists(st.sampled_from(["a", "\n", "\r", "\r\n", *ODD]), max_size=12))
@settings(max_examples=500, deadline=None)
def test_split_lines_keeps_python_lines_whatever_the_mix(pieces):
    """The fast path (str.splitlines, used only when it met no odd break)
    gives the same lines as splitting at the three breaks alone."""
    import re

    text = "".join(pieces)
    expected = [p for p in re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", text) if p]
    assert split_lines(text, keepends=True) == expected
    assert split_lines(text) == [re.sub(r"\r\n$|\r$|\n$", "", p) for p in expected]
