"""Rewrites CUDA source literals inside a Python file, touching nothing else.

Only a source written as one plain string literal (possibly bound to a name
first) is rewritten; concatenations, f-strings and formatted strings are left
alone (the caller emits a sidecar or reports them). The new literal keeps the
original prefix and quotes where it can; the result is re-parsed with libcst
(or ast when libcst is absent) before anything is written.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from portagpu.cuda.pystrings import node_source
from portagpu.lines import split_lines

_PREFIX = re.compile(r"^([rRuU]{0,2})('''|\"\"\"|'|\")")


def single_token(source_lines: list[str], node: ast.Constant) -> str | None:
    """The literal's source if it is exactly one plain (not f/bytes) string token."""
    found = node_source(source_lines, node)
    if found is None:
        return None
    text = found[0]
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                  if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER,
                                    tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError):
        return None
    if len(tokens) != 1 or tokens[0].type != tokenize.STRING:
        return None
    return text if _PREFIX.match(text) else None


def new_literal(old: str, value: str) -> str:
    """A literal spelled like `old` (prefix, quotes) whose value is `value`."""
    match = _PREFIX.match(old)
    assert match is not None
    prefix, quote = match.group(1), match.group(2)
    raw = "r" in prefix.lower()
    if len(quote) == 1 and "\n" in value:
        quote = quote * 3  # a one-line literal cannot hold newlines unescaped
    if raw and quote not in value and not value.endswith("\\") and (
            len(quote) == 3 or quote not in value):
        return f"{prefix}{quote}{value}{quote}"
    body = value.replace("\\", "\\\\")
    body = body.replace(quote, "".join("\\" + c for c in quote))
    if len(quote) == 3 and body.endswith(quote[0]):
        body = body[:-1] + "\\" + quote[0]
    plain = prefix.replace("r", "").replace("R", "")
    return f"{plain}{quote}{body}{quote}"


def replace_spans(text: str, replacements: list[tuple[ast.AST, str]]) -> str:
    """Replace each node's source span by new text (nodes must not overlap)."""
    lines = split_lines(text, keepends=True)  # as ast counts lines
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col_bytes: int) -> int:
        line = lines[lineno - 1]
        return starts[lineno - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8", "replace"))

    spans = sorted(
        ((offset(n.lineno, n.col_offset), offset(n.end_lineno, n.end_col_offset), new)  # type: ignore[attr-defined,arg-type]
         for n, new in replacements),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def verify_python(text: str, path: str) -> None:
    """Raise ValueError if the rewritten module no longer parses."""
    try:
        import libcst

        libcst.parse_module(text)
    except ImportError:
        pass
    except Exception as exc:  # libcst.ParserSyntaxError
        raise ValueError(f"{path}: rewritten module does not parse: {exc}") from None
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"{path}:{exc.lineno}: rewritten module does not parse: {exc.msg}") from None
