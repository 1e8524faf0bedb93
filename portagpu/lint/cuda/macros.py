"""The CUDA rules inside #define bodies.

tree-sitter keeps a macro's body as opaque text, so warp code written as a
macro (`#define WARP_REDUCE(v) for (int o = 16; ...) v += __shfl_xor_sync(...)`,
`#define LANE_ID(r) asm("mov.u32 %0, %%laneid;" : "=r"(r))`) is invisible to
the checkers. Each such body is parsed again as the body of a function, after
the object-like #defines it names, and the hits are mapped back to the file.
Directives are found in the text itself: a comment inside a multi-line macro
ends tree-sitter's preproc node early.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.lint.model import Rule

# `#define NAME` or `#define NAME(params)`, then the body with its continuations
_DEFINE = re.compile(
    rb"(?m)^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)\n]*\))?((?:[^\n]*\\\r?\n)*[^\n]*)"
)
# a body worth parsing holds one of these (the rules' subjects)
_WORTH_IT = re.compile(
    rb"__shfl|\basm\b|__asm__|__ballot|_sync\b|__activemask|threadIdx|warp|WARP|lane"
)
_IDENT = re.compile(rb"[A-Za-z_]\w*")
# an object-like macro whose body is plain arithmetic is a named constant: it is
# parsed as `auto NAME = body;` so that `#define NUM_WARPS (BLOCK_SIZE / 32)`
# reads as the warp count it defines
_ARITHMETIC = re.compile(rb"[\w\s().+\-*/%<>&|^~]+")
_WARPISH_NAME = re.compile(rb"(?i)lane|warp|wave")
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)
# `#param` (stringizing) in a function-like macro: `"mov."#ty" %0"`, `"="#r(out)`
_STRINGIZE = re.compile(rb"(?<![#\w])#[ \t]*([A-Za-z_]\w*)")
_HEAD = b"__device__ void __portagpu_macro_body__() {\n"
_TAIL = b"\n;}\n"

Runner = Callable[[CudaUnit, Sequence[Rule]], "list[tuple[Rule, Hit]]"]


def macro_body_hits(
    unit: CudaUnit, rules: Sequence[Rule], run: Runner
) -> Iterator[tuple[Rule, Hit]]:
    """(rule, hit) for the rules' hits inside #define bodies, at the file's
    byte offsets; `run(unit, rules)` is the analysis' rule runner."""
    data = unit.index.data
    if b"define" not in data:
        return
    matches = list(_DEFINE.finditer(data))
    objects = {m.group(1): m.group(0) for m in matches if m.group(2) is None}
    for match in matches:
        start = match.start(3)
        name, body = match.group(1), match.group(3)
        constant = (
            match.group(2) is None
            and _WARPISH_NAME.search(name) is not None
            and _ARITHMETIC.fullmatch(_COMMENT.sub(b" ", body).strip()) is not None
        )
        if not (constant or _WORTH_IT.search(body)) or unit.is_guarded(match.start()):
            continue
        # a backslash-newline becomes space-newline: same length, same lines
        body = body.replace(b"\\\n", b" \n").replace(b"\\\r\n", b" \r\n")
        if match.group(2) is not None and b"#" in body:
            body = _stringized(body, set(_IDENT.findall(match.group(2))))
        names = set(_IDENT.findall(body)) - {name}
        prelude = b"".join(objects[n] + b"\n" for n in sorted(names) if n in objects)
        head = _HEAD + (b"auto " + name + b" =" if constant else b"")
        base = len(prelude) + len(head)
        inner = CudaUnit(
            (prelude + head + body + _TAIL).decode("utf-8", "surrogatepass"), unit.guard_macros
        )
        inner.file_data = unit.index.data  # the file's #includes, for checkers that ask
        for rule, hit in run(inner, rules):
            if base <= hit.start and hit.end <= base + len(body):
                shift = start - base
                yield rule, Hit(hit.start + shift, hit.end + shift, hit.values, hit.replacement)


def _stringized(body: bytes, params: set[bytes]) -> bytes:
    """`#param` as the string literal it expands to, at the same length
    (`#ty` -> `"t"`, `#r` -> `""`), so that inline PTX assembled from a
    macro's parameters (`"shfl."#dir".b32"`, `"="#r(result)`) still parses."""

    def literal(m: re.Match[bytes]) -> bytes:
        if m.group(1) not in params or m.end() < len(body) and body[m.end() : m.end() + 1] == b"#":
            return m.group(0)
        width = len(m.group(0)) - 2
        return b'"' + m.group(1)[:width].ljust(width) + b'"'

    return _STRINGIZE.sub(literal, body)
