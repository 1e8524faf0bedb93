"""PG505: shuffle reductions laid out for 32 lanes: a loop over offsets that
starts at 16 (or runs up to 32), or an unrolled chain starting with offset 16.
In a loop, the shuffle may also be a project's wrapper or macro
(`SHFL_DOWN_SYNC`, `WARP_SHFL_XOR`) or a cooperative-groups tile's method
(`tile.shfl_up`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, call_args, callee_name, declared_names, int_value
from portagpu.cuda.warp.common import SHUFFLES, Options

SHUFFLE_LIKE = re.compile(r"shfl|shuffle", re.IGNORECASE)


def _delta(name: str, call: Any) -> Any:
    args = call_args(call)
    index = 2 if name.lower().endswith("_sync") and len(args) > 2 else 1
    return args[index] if len(args) > index else None


def _shuffle_name(call: Any) -> str:
    """The callee if it shuffles: a builtin, a wrapper or macro named like one,
    or a method (`tile.shfl_down`)."""
    name = callee_name(call)
    if not name:
        function = call.child_by_field_name("function")
        if function is not None and function.type == "field_expression":
            field = function.child_by_field_name("field")
            name = text_of(field) if field is not None else ""
    return name if name in SHUFFLES or SHUFFLE_LIKE.search(name) else ""


def _loop_variable(loop: Any) -> tuple[str, int] | None:
    init = loop.child_by_field_name("initializer")
    if init is None:
        return None
    if init.type == "declaration":
        for name, value in declared_names(init):
            parsed = int_value(value) if value is not None else None
            if parsed:
                return name, parsed[0]
    elif init.type == "assignment_expression":
        parsed = int_value(init.child_by_field_name("right"))
        if parsed:
            return text_of(init.child_by_field_name("left")), parsed[0]
    return None


def _bound(loop: Any, var: str) -> int | None:
    cond = loop.child_by_field_name("condition")
    if cond is None or cond.type != "binary_expression":
        return None
    if text_of(cond.child_by_field_name("left")) != var:
        return None
    op = text_of(cond.child_by_field_name("operator"))
    parsed = int_value(cond.child_by_field_name("right"))
    if not parsed or op not in ("<", "<="):
        return None
    return parsed[0] + (1 if op == "<=" else 0)


def _shuffles_with(loop: Any, var: str) -> bool:
    body = loop.child_by_field_name("body")
    if body is not None and body.named_child_count == 0 and body.has_error:
        # `for (...)` followed by `#ifdef HIP ... #else ... #endif`: tree-sitter
        # gives the loop an empty body and the conditional becomes its sibling
        sibling = loop.next_named_sibling
        body = sibling if sibling is not None and sibling.type.startswith("preproc_if") else body
    stack = [body] if body is not None else []
    while stack:
        node = stack.pop()
        if node.type == "call_expression":
            name = _shuffle_name(node)
            if name:
                delta = _delta(name, node)
                if delta is not None and var in text_of(delta).replace("(", " ").split():
                    return True
        stack.extend(node.named_children)
    return False


def _offset_macros(unit: CudaUnit) -> dict[str, int]:
    """Function-like macros that shuffle by one of their parameters, name ->
    that parameter's position (`#define STEP(a, w) v = __shfl_xor_sync(m, v,
    a, w)` -> STEP: 0), so that `STEP(16, 32)` is read as a shuffle by 16."""
    defs = [] if unit.in_macros else unit.nodes("preproc_function_def")
    bodies = unit.macro_unit if defs else None
    if bodies is None:
        return {}
    calls = [(c, _shuffle_name(c)) for c in bodies.nodes("call_expression")]
    out: dict[str, int] = {}
    for node in defs:
        name, params, body = (node.child_by_field_name(f) for f in ("name", "parameters", "value"))
        if name is None or params is None or body is None:
            continue
        names = [text_of(p) for p in params.named_children if p.type == "identifier"]
        for call, shuffle in calls:
            if not shuffle or not body.start_byte <= call.start_byte < body.end_byte:
                continue
            delta = _delta(shuffle, call)
            if delta is not None and delta.type == "identifier" and text_of(delta) in names:
                out[text_of(name)] = names.index(text_of(delta))
                break
    return out


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:

    for loop in unit.nodes("for_statement"):
        var_start = _loop_variable(loop)
        if var_start is None:
            continue
        var, start = var_start
        downward = start == 16
        upward = start == 1 and _bound(loop, var) in (32, 17)
        if not (downward or upward) or not _shuffles_with(loop, var):
            continue
        init = loop.child_by_field_name("initializer")
        shape = f"offsets {'16 down to 1' if downward else '1 up to 16'}"
        yield Hit(init.start_byte, init.end_byte, {"shape": shape})
    offset_macros = _offset_macros(unit)
    for call in unit.nodes("call_expression"):
        # builtins, and a project's wrappers named like them (`packed_shfl_down_sync`)
        name = _shuffle_name(call)
        if name:
            delta = _delta(name, call)
        elif callee_name(call) in offset_macros:  # `STEP(16, 32)` unrolled by hand
            name, args = callee_name(call), call_args(call)
            position = offset_macros[name]
            delta = args[position] if len(args) > position else None
        else:
            continue
        parsed = int_value(delta) if delta is not None else None
        if parsed and parsed[0] == 16:
            yield Hit(
                delta.start_byte,
                delta.end_byte,
                {"shape": f"`{name}` with offset 16 (half of a 32-lane warp)"},
            )
