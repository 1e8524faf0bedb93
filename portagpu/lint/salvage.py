"""What can still be checked in a .py file that does not parse as Python 3.

A Python 2 file (print statements, `except E, e:`) or one with a stray syntax
error still holds GPU imports and CUDA kernel strings. Besides its PG901, it
is linted once more with each offending line turned into `pass` (same
indentation, same line count, so every other position is unchanged); when
that does not converge, a token-level pass still finds the CUDA strings.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right

from portagpu.lines import line_starts, split_lines

MAX_ROUNDS = 32
_INDENT = re.compile(r"[ \t]*")


def _parses(text: str) -> SyntaxError | None:
    try:
        compile(text, "<salvage>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError):
        return SyntaxError("unparseable")
    return None


# Python 2 statements, recognised on sight: a file of tutorials prints on every
# other line, more than a round per line could mend
_PY2_STATEMENT = re.compile(
    r"[ \t]*(?:print(?:[ \t]+[^\s=(.,)\]]|[ \t]*$)|exec[ \t]+['\"]|print[ \t]*>>)"
)


def _pass_line(old: str) -> str:
    ending = old[len(old.rstrip("\r\n")) :] or "\n"
    return _INDENT.match(old).group(0) + "pass" + ending


def blank_bad_lines(text: str) -> tuple[str, set[int]] | None:
    """`text` with the lines Python 3 rejects replaced by `pass`, and their
    numbers; None when a few such replacements do not make it parse."""
    lines = split_lines(text, keepends=True)  # as Python numbers the lines
    blanked: set[int] = set()
    if _parses(text) is not None:
        for number, old in enumerate(lines, start=1):
            if _PY2_STATEMENT.match(old) and not old.rstrip().endswith(("\\", ",", "(", "%")):
                lines[number - 1] = _pass_line(old)
                blanked.add(number)
    for _ in range(MAX_ROUNDS):
        error = _parses("".join(lines))
        if error is None:
            return "".join(lines), blanked
        line = error.lineno or 0
        if not 1 <= line <= len(lines) or line in blanked:
            return None
        lines[line - 1] = _pass_line(lines[line - 1])
        blanked.add(line)
    return None


_STRING_START = re.compile(r"""(?i)(?<![\w'"])[rbu]{0,2}('{3}|"{3}|'|")""")


def _string_tokens(text: str) -> list[tuple[int, int, str]]:
    """(start offset, end offset, source) of each string literal, scanned by
    hand: tokenize stops at the first indentation error, this does not."""
    out = []
    i = 0
    while True:
        comment = text.find("#", i)
        match = _STRING_START.search(text, i)
        if match is None:
            return out
        if 0 <= comment < match.start() and "\n" not in text[comment : match.start()]:
            i = text.find("\n", comment)  # a comment runs to the end of its line
            if i < 0:
                return out
            continue
        quote = match.group(1)
        j = match.end()
        while j < len(text):
            if text[j] == "\\":
                j += 2
            elif text.startswith(quote, j):
                j += len(quote)
                break
            elif text[j] == "\n" and len(quote) == 1:
                break  # an unterminated one-line string
            else:
                j += 1
        out.append((match.start(), j, text[match.start() : j]))
        i = j


def string_module(text: str) -> ast.Module:
    """A module of the file's string literals alone, at their own positions:
    enough for the embedded-CUDA checks when the file cannot be parsed."""
    # a first statement that is no string: no literal is taken for a docstring
    body: list[ast.stmt] = [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
    lines = split_lines(text)
    starts = line_starts(text)
    for start, end, source in _string_tokens(text):
        try:
            value = ast.literal_eval(source)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if not isinstance(value, str):
            continue
        (line, col), (end_line, end_col) = _position(starts, start), _position(starts, end)
        node = ast.Constant(
            value=value,
            lineno=line,
            col_offset=_byte_col(lines, line, col),
            end_lineno=end_line,
            end_col_offset=_byte_col(lines, end_line, end_col),
        )
        body.append(
            ast.Expr(
                value=node,
                lineno=line,
                col_offset=node.col_offset,
                end_lineno=end_line,
                end_col_offset=node.end_col_offset,
            )
        )
    return ast.Module(body=body, type_ignores=[])


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    line = bisect_right(starts, offset) - 1
    return line + 1, offset - starts[line]


def _byte_col(lines: list[str], line: int, col: int) -> int:
    """ast columns are UTF-8 byte offsets; tokenize's are characters."""
    return len(lines[line - 1][:col].encode("utf-8")) if 0 < line <= len(lines) else col
