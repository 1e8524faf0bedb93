"""apply_fixes picks the same fixes as the obvious quadratic rule (first in
the file wins; a fix whose edits overlap a chosen one waits), now that the
overlap test is a bisect (issue 13 item 10)."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from portagpu.lint.fixes import apply_fixes
from portagpu.lint.model import Edit, Fix

TEXT = "".join(f"line{i:02d} = value{i}\n" for i in range(12))


def _reference(text: str, fixes: list[Fix]) -> tuple[str, int]:
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    starts.append(len(text))

    def offset(line: int, col: int) -> int:
        return min(starts[line - 1] + col - 1, starts[line])

    spans = []
    for fix in fixes:
        edits = [
            (offset(e.line, e.col), offset(e.end_line, e.end_col), e.content) for e in fix.edits
        ]
        if edits and all(a <= b for a, b, _ in edits):
            spans.append(sorted(edits))
    spans.sort(key=lambda s: s[0][0])
    taken, chosen, applied = [], [], 0
    for edits in spans:
        clash = any(
            a < tb and ta < b or a == b == ta == tb for a, b, _ in edits for ta, tb in taken
        )
        inner = any(edits[i][1] > edits[i + 1][0] for i in range(len(edits) - 1))
        if clash or inner:
            continue
        taken += [(a, b) for a, b, _ in edits]
        chosen += edits
        applied += 1
    for a, b, content in sorted(chosen, reverse=True):
        text = text[:a] + content + text[b:]
    return text, applied


position = st.tuples(st.integers(1, 12), st.integers(1, 16))
edit = st.tuples(
    position, st.integers(0, 8), st.integers(0, 1), st.sampled_from(["", "X", "yy"])
).map(
    lambda t: Edit(t[0][0], t[0][1], t[0][0] + t[2], t[0][1] + t[1] if not t[2] else t[1] + 1, t[3])
)
fixes = st.lists(
    st.lists(edit, min_size=1, max_size=3).map(lambda es: Fix("safe", "f", tuple(es))), max_size=25
)


@settings(max_examples=int(os.environ.get("PORTAGPU_FUZZ_EXAMPLES", "200")), deadline=None)
@given(fixes)
def test_same_choice_as_the_quadratic_rule(chosen):
    assert apply_fixes(TEXT, chosen) == _reference(TEXT, chosen)
