"""Applying safe fixes: edits back to front, the result re-parsed before
anything is written (atomically, by portagpu.fileio), keeping its encoding."""

from __future__ import annotations

import bisect
import codecs
import io
import tokenize
from collections.abc import Iterable, Sequence

from portagpu.fileio import write_atomic
from portagpu.lines import line_starts
from portagpu.lint.model import Finding, Fix


class UnsafeFix(Exception):
    """The fixed text would not parse; nothing is written."""


def _offset(starts: list[int], line: int, col: int) -> int:
    if line < 1:
        return 0
    if line > len(starts) - 1:
        return starts[-1]
    return min(starts[line - 1] + col - 1, starts[line])


class _Taken:
    """Spans already edited, sorted by start: an overlap test is a bisect and
    a look at the neighbours (a scan of every span made big fixes quadratic).
    Spans never overlap each other; empty ones (insertions) may touch."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def overlaps(self, a: int, b: int) -> bool:
        starts, ends = self.starts, self.ends
        j = bisect.bisect_left(starts, a)
        k = j - 1  # spans that start before a: only the last start group can reach it
        while k >= 0 and starts[k] == starts[j - 1]:
            if _clash(a, b, starts[k], ends[k]):
                return True
            k -= 1
        k = j
        while k < len(starts) and (starts[k] < b or starts[k] == a):
            if _clash(a, b, starts[k], ends[k]):
                return True
            k += 1
        return False

    def add(self, a: int, b: int) -> None:
        at = bisect.bisect_right(self.starts, a)
        self.starts.insert(at, a)
        self.ends.insert(at, b)


def _clash(a: int, b: int, ta: int, tb: int) -> bool:
    return (a < tb and ta < b) or a == b == ta == tb


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, int]:
    """Applies each fix's edits together, back to front; a fix whose edits
    overlap one already applied waits for the next round. Returns the new
    text and how many fixes went in."""
    starts = line_starts(text)
    starts.append(len(text))  # the end of the last line
    spans = []
    for fix in fixes:
        edits = [(_offset(starts, e.line, e.col), _offset(starts, e.end_line, e.end_col), e.content) for e in fix.edits]
        if edits and all(a <= b for a, b, _ in edits):
            spans.append(sorted(edits))
    spans.sort(key=lambda s: s[0][0])  # first in the file wins a conflict, as in ruff
    taken = _Taken()
    chosen: list[tuple[int, int, str]] = []
    applied = 0
    for edits in spans:
        inner = any(edits[i][1] > edits[i + 1][0] for i in range(len(edits) - 1))
        if inner or any(taken.overlaps(a, b) for a, b, _ in edits):
            continue
        for a, b, _ in edits:
            taken.add(a, b)
        chosen.extend(edits)
        applied += 1
    pieces, at = [], 0  # one pass: re-slicing the text per edit is quadratic
    for a, b, content in sorted(chosen, key=lambda e: (e[0], e[1])):
        pieces += (text[at:a], content)
        at = b
    pieces.append(text[at:])
    return "".join(pieces), applied


def check_parses(text: str, path: str, language: str, original: str | None = None) -> None:
    """Raises UnsafeFix when the fixed `text` parses worse than `original`:
    Python must compile, and parse with libcst where the original did (libcst
    refuses some valid files, e.g. a form feed in an indentation, and a fix
    is not to blame for that); CUDA must not gain tree-sitter errors."""
    if language == "cuda":
        if original is not None and _cuda_errors(text) > _cuda_errors(original):
            raise UnsafeFix("the fixed CUDA code has syntax errors the original did not")
        return
    if language != "python":
        return
    from portagpu.lint.source import is_notebook

    if is_notebook(path):
        from portagpu.lint.model import ParseFailure
        from portagpu.lint.notebook import check_notebook_parses, unwrap

        try:
            check_notebook_parses(text)
        except ParseFailure as exc:
            raise UnsafeFix(f"the fixed notebook does not parse ({exc.message})") from None
        text = unwrap(text).text
    import ast

    try:
        ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise UnsafeFix(f"the fixed code does not parse ({exc})") from None
    import libcst

    try:
        libcst.parse_module(text)
    except Exception as exc:  # libcst raises several unrelated error types
        if original is not None and not _libcst_parses(original):
            return  # the original does not parse with libcst either
        raise UnsafeFix(f"libcst cannot parse the fixed code ({type(exc).__name__})") from None


def _libcst_parses(text: str) -> bool:
    import libcst

    try:
        libcst.parse_module(text)
    except Exception:  # noqa: BLE001 - libcst raises several unrelated error types
        return False
    return True


def _cuda_errors(text: str) -> int:
    from portagpu.cuda.parser import error_spans, parse

    return len(error_spans(parse(text)))


def safe_fixes(findings: Sequence[Finding], *, unsafe: bool = False) -> list[Fix]:
    """The fixes --fix applies; `unsafe` (--unsafe-fixes) adds the suggestions that carry edits."""
    return [
        f.fix
        for f in findings
        if f.fix is not None and f.fix.edits and (unsafe or f.fix.applicability == "safe")
    ]


def encoding_for(data: bytes, language: str) -> str:
    """The codec a file was read with, so a fixed file is written back the same way."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        if language == "python":
            try:
                return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
            except SyntaxError:
                pass
        return "utf-8"


__all__ = ["UnsafeFix", "apply_fixes", "check_parses", "encoding_for", "safe_fixes", "write_atomic"]
