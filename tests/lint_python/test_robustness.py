"""Odd sources never crash check_python: it returns findings inside the text
or raises ParseFailure."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portagpu.lint.catalogue import load_catalogue
from portagpu.lint.model import LintSettings, ParseFailure
from portagpu.lint.python import check_python

RULES = [r for r in load_catalogue() if r.language == "python" and r.id < "PG500"]
SNIPPETS = [e.code for r in RULES for e in (*r.invalid, *r.valid)] + [
    "x = 'ünï' ; torch.cuda.synchronize()",
    "if torch.version.hip:\n",
    "    return x.cuda()",
    "def f(device):",
    "\t",
    "# -*- coding: latin-1 -*-",
    "'''",
    "@triton.autotune(configs=[",
    "])",
    "\r\n",
    "async def g():\n    await x.cuda()",
    "match d:\n    case 'cuda':\n        y = x.cuda()",
    "try:\n    import pynvml\nexcept* ImportError:\n    pass",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SNIPPETS), max_size=6), st.integers(0, 40))
def test_random_sources_do_not_crash(parts: list[str], cut: int) -> None:
    text = "\n".join(parts)
    if cut:
        text = text[: max(0, len(text) - cut)]  # truncated files exist too
    try:
        findings = check_python("fuzz.py", text, RULES, LintSettings())
    except ParseFailure as failure:
        assert failure.line >= 1 and failure.col >= 1
        return
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for f in findings:
        assert 1 <= f.line <= f.end_line <= len(lines)
        assert 1 <= f.col <= len(lines[f.line - 1]) + 1
        assert f.end_col <= len(lines[f.end_line - 1]) + 1
        for edit in f.fix.edits if f.fix else ():
            assert (edit.line, edit.col) <= (edit.end_line, edit.end_col)
