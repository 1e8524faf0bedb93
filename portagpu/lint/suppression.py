"""`# noqa`, `# noqa: PG101`, `# portagpu: ignore[PG101]` (also `//` and
`/* */` comments in CUDA) and `--add-noqa`, which writes them for today's
findings so that only new findings fail CI.

A finding inside a multi-line string (e.g. an embedded CUDA kernel) or on a
backslash-continued line is suppressed by a comment on the line where that
string or logical line ends, the only place a comment can go (as in ruff)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

from portagpu.lines import line_starts, split_lines, strip_ending
from portagpu.lint.meta import META_CODES
from portagpu.lint.model import Finding

_CODE = r"[A-Z]+[0-9]+"
_CODES = rf"{_CODE}(?:\s*,?\s*{_CODE})*"
DIRECTIVE = re.compile(
    rf"(?:\#|//|/\*)\s*(?:"
    rf"(?P<noqa>noqa)(?::\s*(?P<noqa_codes>{_CODES}))?"
    rf"|portagpu:\s*ignore(?:\[\s*(?P<ignore_codes>{_CODES})\s*\])?"
    rf")",
    re.IGNORECASE,
)

# per line: None suppresses every code, a set only those codes
Directives = dict[int, "frozenset[str] | None"]


def _codes(raw: str | None) -> frozenset[str] | None:
    if not raw:
        return None
    return frozenset(re.findall(_CODE, raw.upper()))


def find_directives(text: str) -> Directives:
    # every directive holds one of these words (any case): a case-blind
    # substring test rules most files out ~5x faster than a regex search
    lowered = text.lower()
    if "noqa" not in lowered and "portagpu" not in lowered:
        return {}
    starts = line_starts(text)
    out: Directives = {}
    for m in DIRECTIVE.finditer(text):
        line = bisect.bisect_right(starts, m.start())
        codes = _codes(m.group("noqa_codes") if m.group("noqa") else m.group("ignore_codes"))
        if line in out:
            prev = out[line]
            out[line] = None if prev is None or codes is None else prev | codes
        else:
            out[line] = codes
    return out


def comment_lines(text: str, language: str) -> dict[int, int]:
    """Lines on which no comment can be appended -> the line that takes it instead.

    Uses `ast` (C speed) rather than `tokenize` (pure Python, ~50x slower on a
    10,000-line file): the lines a multi-line string spans map to its last
    line; backslash-continued lines to the line that ends the statement."""
    moved: dict[int, int] = {}
    if language != "python":
        return moved
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant | ast.JoinedStr):
                end = node.end_lineno or node.lineno
                if end > node.lineno:
                    for line in range(node.lineno, end):
                        moved.setdefault(line, end)
    lines = split_lines(text)
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].endswith("\\") and index + 1 not in moved:
            target = index + 2
            moved[index + 1] = moved.get(target, target)
    return moved


def _anchor(line: int, moved: dict[int, int]) -> int:
    seen = 0
    while line in moved and seen < 10_000:
        line, seen = moved[line], seen + 1
    return line


def apply_suppressions(text: str, findings: Sequence[Finding], language: str) -> list[Finding]:
    """Drops findings silenced by a directive; PG9xx diagnostics cannot be silenced."""
    if not findings:
        return list(findings)
    directives = find_directives(text)
    if not directives:
        return list(findings)
    moved: dict[int, int] | None = None
    kept = []
    for finding in findings:
        if finding.code in META_CODES or not _covered_later(directives, finding):
            kept.append(finding)
            continue
        if _covers(directives, finding.line, finding.code):
            continue
        if moved is None:  # built only when a later line's directive might apply
            moved = comment_lines(text, language)
        anchor = _anchor(finding.line, moved)
        if anchor != finding.line and _covers(directives, anchor, finding.code):
            continue
        kept.append(finding)
    return kept


def _covers(directives: Directives, line: int, code: str) -> bool:
    if line not in directives:
        return False
    codes = directives[line]
    return codes is None or code in codes


def _covered_later(directives: Directives, finding: Finding) -> bool:
    """Is there a directive for this code on the finding's line or after it?"""
    return any(line >= finding.line and _covers(directives, line, finding.code) for line in directives)


def add_noqa(text: str, findings: Iterable[Finding], language: str) -> str:
    """Text with a suppression comment for each finding; an existing
    `noqa: CODES` on that line is extended. Running it twice adds nothing."""
    wanted: dict[int, set[str]] = {}
    moved = comment_lines(text, language)
    for finding in findings:
        if finding.code in META_CODES:
            continue
        wanted.setdefault(_anchor(finding.line, moved), set()).add(finding.code)
    if not wanted:
        return text
    lines = split_lines(text, keepends=True)
    for line_no, codes in sorted(wanted.items()):
        if line_no > len(lines):
            continue
        body, ending = strip_ending(lines[line_no - 1])
        existing = [m for m in DIRECTIVE.finditer(body) if m.group("noqa")]
        if existing:
            m = existing[-1]
            if m.group("noqa_codes") is None:
                continue  # a blanket noqa already covers everything
            merged = sorted(set(_codes(m.group("noqa_codes")) or ()) | codes)
            start, end = m.span("noqa_codes")
            body = body[:start] + ", ".join(merged) + body[end:]
        else:
            comment = f"noqa: {', '.join(sorted(codes))}"
            if language in ("python", "deps"):
                body = f"{body}  # {comment}"
            elif body.endswith("\\"):  # inside a C macro: keep the continuation
                body = f"{body[:-1].rstrip()} /* {comment} */ \\"
            else:
                body = f"{body}  // {comment}"
        lines[line_no - 1] = body + ending
    return "".join(lines)
