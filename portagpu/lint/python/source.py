"""Source text helpers: character columns and candidate lines.

`ast` reports columns as UTF-8 byte offsets; findings carry 1-based character
columns, so non-ASCII lines are converted (ASCII files skip all of it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from portagpu.lint import tokenlines


class Source:
    """One Python file's text with cheap line/column conversions."""

    def __init__(self, text: str) -> None:
        self.text = text
        # ast splits lines on \r\n, \r and \n; normalise so line numbers agree.
        self.normalized = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
        self.ascii = text.isascii()
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.normalized.split("\n")
        return self._lines

    def line(self, lineno: int) -> str:
        lines = self.lines
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""

    def char_col(self, lineno: int, byte_col: int) -> int:
        """0-based character column of ast's 0-based byte column on `lineno`."""
        if self.ascii:
            return byte_col
        text = self.line(lineno)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def segment(self, lineno: int, col: int, end_lineno: int, end_col: int) -> str:
        """Text between two 0-based character positions (lines 1-based)."""
        if lineno == end_lineno:
            return self.line(lineno)[col:end_col]
        parts = [self.line(lineno)[col:]]
        parts.extend(self.line(n) for n in range(lineno + 1, end_lineno))
        parts.append(self.line(end_lineno)[:end_col])
        return "\n".join(parts)

    def candidate_lines(self, words: Iterable[str], identifiers: Iterable[str] = ()) -> list[int]:
        """Sorted 1-based numbers of lines holding any of `words` (substrings)
        or `identifiers` (whole words)."""
        index = tokenlines.for_text(self.text)  # shared with narrowing and the rules' pre-scan
        found: set[int] = set()
        for word in tokenlines.minimal_of(frozenset(words)):
            found.update(index.of(word))
        names = tuple(sorted(set(identifiers)))
        pattern = _identifiers(names)
        if pattern is not None:
            # a line holding a name as a whole word holds it as a substring:
            # only those lines (found fast by the index) are read by the regex,
            # which scanning the whole text would try at every offset
            text, starts, search = self.text, index.starts, pattern.search  # starts ends with len(text)
            maybe: set[int] = set()
            for name in tokenlines.minimal(names):
                maybe.update(index.of(name))
            maybe -= found
            found.update(n for n in maybe if search(text, starts[n - 1], starts[n]))
        return sorted(found)


@lru_cache(maxsize=64)
def _identifiers(names: tuple[str, ...]) -> re.Pattern[str] | None:
    names = tuple(n for n in names if n)
    if not names:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b")
