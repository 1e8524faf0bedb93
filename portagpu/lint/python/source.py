"""Source text helpers: character columns and candidate lines.

`ast` reports columns as UTF-8 byte offsets; findings carry 1-based character
columns, so non-ASCII lines are converted (ASCII files skip all of it).
"""

from __future__ import annotations

from collections.abc import Iterable

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
        found.update(index.word_lines(n for n in set(identifiers) if n))
        return sorted(found)
