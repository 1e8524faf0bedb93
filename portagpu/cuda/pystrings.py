"""Python string literals as text plus, per character, the (line, column) in
the Python file where that character is written.

The values ast gives lose how they were spelled (escapes, prefixes, implicit
concatenation, line continuations); mapping through the raw source keeps
findings inside an embedded CUDA string at the right Python line and column.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

Pos = tuple[int, int]  # 1-based line, 1-based character column

_SIMPLE_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
    "n": "\n", "r": "\r", "t": "\t", "v": "\v",
}
_PREFIX = re.compile(r"[rRbBuUfF]{0,2}")
# what a string's body cannot take as a plain character: an escape, a line
# break, the quote that may close it, and in an f-string a brace
_SPECIAL = {
    (q, fmt): re.compile(r"[\\\r\n" + q + ("{}" if fmt else "") + "]")
    for q in "'\"" for fmt in (False, True)
}


@dataclass
class Mapped:
    """Text assembled from Python source; pos[i] locates text[i] (None: synthetic)."""

    text: str = ""
    pos: list[Pos | None] = field(default_factory=list)
    unknown: list[tuple[Pos, str]] = field(default_factory=list)  # what could not be resolved

    def __add__(self, other: Mapped) -> Mapped:
        return Mapped(self.text + other.text, self.pos + other.pos, self.unknown + other.unknown)

    @classmethod
    def synthetic(cls, text: str, at: Pos | None = None) -> Mapped:
        return cls(text, [at] * len(text))

    def locate(self, start: int, end: int) -> tuple[int, int, int, int] | None:
        """Python span of text[start:end] (character offsets)."""
        if start >= len(self.pos) or self.pos[start] is None:
            return None
        line, col = self.pos[start]  # type: ignore[misc]
        last = self.pos[max(start, end - 1)] if end - 1 < len(self.pos) else None
        if last is None:
            return line, col, line, col + 1
        return line, col, last[0], last[1] + 1

    def exact(self, start: int, end: int) -> bool:
        """True when text[start:end] is written verbatim on one Python line."""
        span = self.pos[start:end]
        if not span or any(p is None for p in span):
            return False
        first, last = span[0], span[-1]
        return first[0] == last[0] and last[1] - first[1] == end - start - 1  # type: ignore[index]


class _Cursor:
    """Walks raw source text keeping the 1-based line and character column."""

    def __init__(self, src: str, line: int, col: int) -> None:
        self.src, self.i, self.line, self.col = src, 0, line, col

    def peek(self, n: int = 1) -> str:
        return self.src[self.i:self.i + n]

    def at(self) -> Pos:
        return self.line, self.col

    def take(self, n: int = 1) -> str:
        out = self.src[self.i:self.i + n]
        for k, ch in enumerate(out, self.i):
            # a line ends at \n, or at a \r not followed by \n (Python's model)
            if ch == "\n" or (ch == "\r" and self.src[k + 1:k + 2] != "\n"):
                self.line, self.col = self.line + 1, 1
            else:
                self.col += 1
        self.i += n
        return out

    def done(self) -> bool:
        return self.i >= len(self.src)


def node_source(source_lines: list[str], node: ast.AST) -> tuple[str, int, int] | None:
    """Raw source of node, with its start (line, character column)."""
    lineno, end_lineno = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if lineno is None or end_lineno is None:
        return None
    first = source_lines[lineno - 1].encode("utf-8")
    start_col = len(first[: node.col_offset].decode("utf-8", "replace"))  # type: ignore[attr-defined]
    if lineno == end_lineno:
        text = first[node.col_offset: node.end_col_offset].decode("utf-8", "replace")  # type: ignore[attr-defined]
    else:
        parts = [first[node.col_offset:].decode("utf-8", "replace")]  # type: ignore[attr-defined]
        parts += source_lines[lineno: end_lineno - 1]
        last = source_lines[end_lineno - 1].encode("utf-8")
        parts.append(last[: node.end_col_offset].decode("utf-8", "replace"))  # type: ignore[attr-defined]
        text = "".join(parts)
    return text, lineno, start_col + 1


def literal(source_lines: list[str], node: ast.AST, fexpr=None) -> Mapped | None:
    """Mapped text of a str Constant or JoinedStr (implicit concatenation included).

    fexpr(expression_source, pos) -> Mapped gives the text for an f-string
    replacement field; by default it becomes a placeholder marked unknown.
    """
    found = node_source(source_lines, node)
    if found is None:
        return None
    src, line, col = found
    cur = _Cursor(src, line, col)
    out = Mapped()
    while not cur.done():
        ch = cur.peek()
        if ch in " \t\r\n()":
            cur.take()
            continue
        if ch == "\\" and cur.peek(2) in ("\\\n", "\\\r"):
            cur.take(2)
            continue
        if ch == "#":
            while not cur.done() and cur.peek() not in ("\n", "\r"):
                cur.take()
            continue
        prefix = _PREFIX.match(src, cur.i).group(0)
        if src[cur.i + len(prefix): cur.i + len(prefix) + 1] not in ("'", '"'):
            return None  # not a plain literal sequence
        cur.take(len(prefix))
        out = out + _one_string(cur, prefix.lower(), fexpr)
    return out


def _one_string(cur: _Cursor, prefix: str, fexpr) -> Mapped:
    quote = cur.peek(3) if cur.peek(3) in ("'''", '"""') else cur.peek()
    cur.take(len(quote))
    raw, fmt = "r" in prefix, "f" in prefix
    out = Mapped()
    text: list[str] = []
    pos: list[Pos | None] = []
    special = _SPECIAL[(quote[0], fmt)]
    src = cur.src
    while not cur.done() and cur.peek(len(quote)) != quote:
        # a run of plain characters on this line is taken at once (kernel
        # sources are long): each stands for itself, one column further on
        stop = special.search(src, cur.i)
        end = stop.start() if stop is not None else len(src)
        if end > cur.i:
            line, col = cur.line, cur.col
            text.append(src[cur.i : end])
            pos.extend([(line, c) for c in range(col, col + end - cur.i)])
            cur.col += end - cur.i
            cur.i = end
            continue
        here = cur.at()
        ch = cur.peek()
        if ch == "\\":
            if raw:
                text.append(cur.take())
                pos.append(here)
                nxt_here = cur.at()
                text.append(cur.take())  # the escaped char stays, and cannot close the string
                pos.append(nxt_here)
                continue
            decoded = _escape(cur)
            text.extend(decoded)
            pos.extend([here] * len(decoded))
            continue
        if fmt and ch in "{}":
            if cur.peek(2) in ("{{", "}}"):
                cur.take(2)
                text.append(ch)
                pos.append(here)
                continue
            if ch == "{":
                out = out + Mapped("".join(text), pos)
                text, pos = [], []
                expr = _replacement_field(cur)
                if fexpr is not None:
                    out = out + fexpr(expr, here)
                else:
                    out = out + placeholder(expr, here)
                continue
        text.append(cur.take())
        pos.append(here)
    cur.take(len(quote))
    return out + Mapped("".join(text), pos)


def placeholder(expr: str, at: Pos) -> Mapped:
    mapped = Mapped.synthetic("__portagpu_unknown__", at)
    mapped.unknown.append((at, expr))
    return mapped


def _escape(cur: _Cursor) -> str:
    cur.take()  # backslash
    ch = cur.peek()
    if ch in ("\n", "\r"):
        cur.take()
        return ""
    if ch in _SIMPLE_ESCAPES:
        cur.take()
        return _SIMPLE_ESCAPES[ch]
    if ch in "01234567":
        digits = ""
        while len(digits) < 3 and cur.peek() in tuple("01234567") and not cur.done():
            digits += cur.take()
        return chr(int(digits, 8))
    width = {"x": 2, "u": 4, "U": 8}.get(ch)
    if width:
        cur.take()
        digits = cur.take(width)
        try:
            return chr(int(digits, 16))
        except ValueError:
            return "\\" + ch + digits
    if ch == "N" and cur.peek(2) == "N{":
        import unicodedata

        name = ""
        cur.take(2)
        while not cur.done() and cur.peek() != "}":
            name += cur.take()
        cur.take()
        try:
            return unicodedata.lookup(name)
        except KeyError:
            return "?"
    return "\\"  # unknown escape: the backslash stays, the next char is read normally


def _replacement_field(cur: _Cursor) -> str:
    """Consume `{expr!r:spec}`; return expr's source."""
    cur.take()  # {
    depth, expr, in_expr = 0, "", True
    while not cur.done():
        ch = cur.peek()
        if ch in "'\"":
            quote = ch
            s = cur.take()
            while not cur.done() and cur.peek() != quote:
                s += cur.take()
            s += cur.take()
            if in_expr:
                expr += s
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0 and ch == "}":
                cur.take()
                break
            depth -= 1
        elif depth == 0 and ch in "!:" and cur.peek(2) != "!=":
            in_expr = False
        if in_expr:
            expr += ch
        cur.take()
    return expr.strip()
