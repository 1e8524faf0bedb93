"""Which lines of one file hold a token, searched once per token and file.

Narrowing, each rule's pre-scan and the walk's candidate lines all ask this
of the same text; a search is a pass over the whole file (most tokens are
absent), so asking twice costs as much as parsing saves. One `str.find` per
token beats one regex alternation over all of them here (measured on torch's
tree: 1.2 s against 2.0 s; a trie-shaped alternation ties with `find`).

Lines are counted as Python counts them (portagpu.lines)."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

from portagpu.lines import split_lines


class TokenLines:
    """Sorted 1-based numbers of the lines holding each token (a substring)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lines: list[str] | None = None
        self._starts: list[int] | None = None
        self._found: dict[str, list[int]] = {}
        self._words: str | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text, keepends=True)
        return self._lines

    @property
    def starts(self) -> list[int]:
        """Offset of each line's start, then the text's end: line N is
        text[starts[N - 1]:starts[N]]."""
        if self._starts is None:
            self._starts = [0, *itertools.accumulate(map(len, self.lines))]
        return self._starts

    def of(self, token: str) -> list[int]:
        found = self._found.get(token)
        if found is None:
            found = self._found[token] = self._search(token)
        return found

    def has(self, token: str) -> bool:
        return bool(self.of(token))

    def _absent(self, token: str) -> bool:
        """Most tokens are in no file, and a search that finds nothing reads
        the whole text. A token with no whitespace lies inside one of the
        text's whitespace-separated words, and the distinct words (joined by
        a line break, which such a token cannot span) are about a third of
        the text: a miss there is a miss in the text at a third of the cost."""
        if " " in token or not token.isprintable():
            return False  # may hold whitespace (every other kind is unprintable)
        if self._words is None:
            self._words = "\n".join(set(self.text.split()))
        return token not in self._words

    def _search(self, token: str) -> list[int]:
        if not token or self._absent(token):
            return []
        text, starts = self.text, self.starts
        find, after = text.find, bisect.bisect_right
        lines: list[int] = []
        at = find(token)
        while at >= 0:
            line = after(starts, at)
            lines.append(line)
            at = find(token, starts[line])
        return lines

    def word_lines(self, names: Iterable[str], among: set[int] | None = None) -> set[int]:
        """Lines (of `among`, where given) where one of `names` stands as a
        whole word (regex `\\b` semantics), found from the substring search's
        lines with a look at each hit's neighbours: no per-call regex over
        names that change from file to file."""
        text, starts, end_of_text = self.text, self.starts, len(self.text)
        found: set[int] = set()
        for name in names:
            size = len(name)
            for line in self.of(name):
                if line in found or (among is not None and line not in among):
                    continue
                stop = starts[line] if line < len(starts) else end_of_text
                at = text.find(name, starts[line - 1], stop)
                while at >= 0:
                    if not (at and _is_word_char(text[at - 1])) and not (
                        at + size < end_of_text and _is_word_char(text[at + size])
                    ):
                        found.add(line)
                        break
                    at = text.find(name, at + size, stop)
        return found

    def code_word_lines(self, words: Iterable[str], in_text_block: Callable[[int], bool]) -> set[int]:
        """Lines where one of `words` stands as a whole word in code, as
        word_offsets reads it: a word in a comment, a docstring or inside a
        longer name (`is_cuda`) is not on them. Only the lines the cached
        substring search found are read, each up to its first such word."""
        text, starts, end_of_text = self.text, self.starts, len(self.text)
        found: set[int] = set()
        for word in words:
            size = len(word)
            for line in self.of(word):
                if line in found:
                    continue
                begin = starts[line - 1]
                stop = starts[line] if line < len(starts) else end_of_text
                at = text.find(word, begin, stop)
                while at >= 0:
                    if _code_word_at(text, at, at + size, begin, in_text_block):
                        found.add(line)
                        break
                    at = text.find(word, at + size, stop)
        return found

    def narrowed(self, text: str, blanked: list[tuple[int, int, str]]) -> TokenLines:
        """The index of `text`: this text with the line ranges [a, b) of
        `blanked` emptied (line a holding `indent + "pass"` where an indent is
        given). Its hits are this index's, less those on blanked lines."""
        return _Narrowed(text, self, sorted(blanked))


_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_WORD_AFTER = _WORD_CHARS - frozenset("0123456789")  # a digit may follow: `cupy-cuda12x`, `+cu121`


def _is_word_char(char: str) -> bool:
    """Part of a word as the regex `\\w` reads it: ASCII fast, Unicode letters too."""
    return char in _WORD_CHARS or (char > "\x7f" and char.isalnum())


def word_offsets(text: str, token: str, in_text_block: Callable[[int], bool] | None = None) -> Iterator[int]:
    """Offsets where `token` stands in `text` as a whole word outside a `#`
    comment (and outside a docstring or other text block, where
    `in_text_block(offset)` says so): `torch.cuda`, `"cuda:0"`,
    `cupy-cuda12x`, but not `is_cuda`, `cudagraphs` or `# moves to cuda`. A
    `#` counts as a comment's only when no quote comes before it on its line
    (it may sit in a string otherwise). `str.find` and a look at the
    neighbours: ~3x faster than a regex with look-arounds."""
    find, size = text.find, len(token)
    at = find(token)
    while at >= 0:
        end = at + size
        # where the line starts: Python ends lines at \n, \r\n and a lone \r
        if _code_word_at(text, at, end, max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1, in_text_block):
            yield at
        at = find(token, end)


def _code_word_at(
    text: str, at: int, end: int, line_start: int, in_text_block: Callable[[int], bool] | None
) -> bool:
    """Whether text[at:end] stands as a whole word in code: no word character
    before it nor a letter after it (a digit may follow: `cupy-cuda12x`), no
    comment `#` before it on its line unless a quote comes first (it may sit
    in a string), and not inside a text block where `in_text_block` says so."""
    if (at and text[at - 1] in _WORD_CHARS) or text[end : end + 1] in _WORD_AFTER:
        return False
    before = text[line_start:at]
    if "#" in before and "'" not in before and '"' not in before:
        return False
    return not (in_text_block and in_text_block(at))


def has_word(text: str, token: str, in_text_block: Callable[[int], bool] | None = None) -> bool:
    """Whether `token` stands in `text` as a whole word in code (word_offsets)."""
    return next(word_offsets(text, token, in_text_block), None) is not None


def minimal(tokens: Iterable[str]) -> tuple[str, ...]:
    """The tokens that contain no other token, shortest first: a line holds
    one of `tokens` exactly when it holds one of these (`backends.cuda` is
    found wherever `cuda` is), so only these need a search."""
    kept: list[str] = []
    for token in sorted({t for t in tokens if t}, key=lambda t: (len(t), t)):
        if not any(k in token for k in kept):
            kept.append(token)
    return tuple(kept)


@lru_cache(maxsize=64)
def minimal_of(tokens: frozenset[str]) -> tuple[str, ...]:
    """`minimal`, remembered: a run asks it of the same rule tokens per file."""
    return minimal(tokens)


_last: TokenLines | None = None  # one file at a time: narrowing hands its index to the checker


def for_text(text: str) -> TokenLines:
    """The index of `text` (the very object), reused when it is the last one made."""
    global _last
    last = _last
    if last is None or last.text is not text:
        last = _last = TokenLines(text)
    return last


def mentions(text: str, tokens: Iterable[str]) -> bool:
    """Whether `text` holds any of `tokens`: from the index of `text` when it
    is the last one made (its searches are mostly done), else by searching."""
    last = _last
    if last is not None and last.text is text:
        return any(last.has(token) for token in tokens)
    return any(token in text for token in tokens)


def original_text(text: str) -> str:
    """The text before narrowing blanked blocks of it (`text` itself when it
    was not narrowed): facts about the whole module, such as the names of
    its top-level definitions, must not depend on what narrowing kept."""
    last = _last
    if isinstance(last, _Narrowed) and last.text is text:
        return last._full.text
    return text


def remember(index: TokenLines) -> TokenLines:
    global _last
    _last = index
    return index


class _Narrowed(TokenLines):
    def __init__(self, text: str, full: TokenLines, blanked: list[tuple[int, int, str]]) -> None:
        super().__init__(text)  # same line numbers, other offsets (a blanked `\r\n` is `\n`)
        self._full = full
        self._firsts = [a for a, _, _ in blanked]
        self._stops = [b for _, b, _ in blanked]

    def _search(self, token: str) -> list[int]:
        # narrowing searched its own tokens in the whole text: their hits,
        # less the blanked lines, are free. Any other token is searched in
        # this text, which is what was kept (a quarter to a half of the
        # whole in wanted files), and an inserted `pass` or a token spanning
        # lines is then matched as in any text.
        if token not in self._full._found or not token.strip(" \tpas") or "\n" in token or "\r" in token:
            return super()._search(token)
        firsts, stops = self._firsts, self._stops
        kept = []
        for line in self._full.of(token):
            at = bisect.bisect_right(firsts, line) - 1
            if at < 0 or line >= stops[at]:
                kept.append(line)
        return kept
