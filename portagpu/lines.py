"""The one line model of portagpu: a line ends at `\\r\\n`, `\\r` or `\\n`.

That is Python's own model (its tokenizer and `ast` positions) and a C
compiler's. `str.splitlines()` also splits on form feed, vertical tab,
U+001C..U+001E, U+0085, U+2028 and U+2029, which Python source may hold
inside a line (a form feed is a common page break): counting lines with it
puts a fix, a `# noqa` or a reported position on the wrong line. Every
offset computation in lint, fixes, suppressions, the pre-scan, narrowing
and hipify goes through here."""

from __future__ import annotations

import bisect
import re

_BREAK = re.compile(r"\r\n|\r|\n")
_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
# zero-width split points: after \n, and after a \r not followed by \n
_SPLIT_KEEP = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")

ENDINGS = ("\r\n", "\r", "\n")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """`text.splitlines(keepends)` with only `\\r\\n`, `\\r` and `\\n` as breaks."""
    if "\r" not in text:  # the common case, at C speed
        if keepends:
            # str.splitlines also breaks at the characters above; where it
            # made exactly one part per `\n` (plus an unended last line) it
            # met none of them, and its parts are ours
            parts = text.splitlines(True)
            if len(parts) == text.count("\n") + (not text.endswith("\n") and text != ""):
                return parts
        parts = text.split("\n")
        last = parts.pop()
        if keepends:
            parts = [p + "\n" for p in parts]
        if last:
            parts.append(last)
        return parts
    if keepends:
        parts = _SPLIT_KEEP.split(text)
        return parts[:-1] if parts and not parts[-1] else parts
    parts = _BREAK.split(text)
    return parts[:-1] if parts and not parts[-1] else parts


def line_starts(text: str) -> list[int]:
    """Offsets at which each line begins: line N (1-based) starts at
    `starts[N - 1]`. There is always one more entry than line breaks."""
    if "\r" not in text:
        starts = [0]
        find = text.find
        at = find("\n")
        while at >= 0:
            starts.append(at + 1)
            at = find("\n", at + 1)
        return starts
    return [0, *(m.end() for m in _BREAK.finditer(text))]


def line_starts_bytes(data: bytes) -> list[int]:
    """`line_starts` over encoded text (byte offsets)."""
    if b"\r" not in data:
        starts = [0]
        at = data.find(b"\n")
        while at >= 0:
            starts.append(at + 1)
            at = data.find(b"\n", at + 1)
        return starts
    return [0, *(m.end() for m in _BREAK_BYTES.finditer(data))]


def line_of(starts: list[int], offset: int) -> int:
    """1-based line holding `offset`."""
    return bisect.bisect_right(starts, offset)


def count_breaks(text: str, start: int = 0, end: int | None = None) -> int:
    """Line breaks in text[start:end] (`\\r\\n` counts once)."""
    chunk = text[start:end]
    if "\r" not in chunk:
        return chunk.count("\n")
    return len(_BREAK.findall(chunk))


def strip_ending(line: str) -> tuple[str, str]:
    """(body, ending) of one line as `split_lines(keepends=True)` gives it."""
    for ending in ENDINGS:
        if line.endswith(ending):
            return line[: -len(ending)], ending
    return line, ""


def normalize(text: str) -> str:
    """Every line break as `\\n` (what Python's tokenizer sees)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
