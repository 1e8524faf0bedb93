"""PG505: shuffle reductions laid out for 32 lanes: a loop over offsets that
starts at 16 (or runs up to 32), also written as powers of two (`1 << k` for
k from 4 down to 0, or 0 up to 4), or an unrolled chain starting with offset 16.
In a loop, the shuffle may also be a project's wrapper or macro
(`SHFL_DOWN_SYNC`, `WARP_SHFL_XOR`) or a cooperative-groups tile's method
(`tile.shfl_up`). A plain shuffle that reads source lane 31 with no width
(`__shfl_sync(mask, total, 31)`) takes the last lane of a 32-lane warp."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from portagpu.cuda.parser import text_of, walk
from portagpu.cuda.unit import (
    CudaUnit,
    Hit,
    call_args,
    callee_name,
    const_value,
    declared_names,
    enclosing_function,
    eval_constant_text,
    int_value,
    unwrap,
)
from portagpu.cuda.warp.common import Options
from portagpu.cuda.warp.macro_roles import DELTA, macro_roles, shuffle_delta, shuffle_name


def _start(node: Any) -> int | None:
    """A loop's first value: a literal or a constant expression of literals,
    exact divisions included (`32 / 2`)."""
    node = unwrap(node)
    if node is not None and node.type == "binary_expression":
        op = node.child_by_field_name("operator")
        if op is not None and text_of(op) == "/":
            left = const_value(node.child_by_field_name("left"))
            right = const_value(node.child_by_field_name("right"))
            return left // right if left is not None and right and left % right == 0 else None
    return const_value(node)


def _loop_inits(loop: Any) -> list[tuple[str, Any]]:
    """(variable, first value) pairs of a loop's initializer."""
    init = loop.child_by_field_name("initializer")
    if init is None:
        return []
    if init.type == "declaration":
        return [(name, value) for name, value in declared_names(init) if value is not None]
    if init.type == "assignment_expression":
        return [(text_of(init.child_by_field_name("left")), init.child_by_field_name("right"))]
    return []


def _loop_variable(loop: Any) -> tuple[str, int] | None:
    for name, value in _loop_inits(loop):
        start = _start(value)
        if start is not None:
            return name, start
    return None


def halved_width_loops(unit: CudaUnit) -> Iterator[tuple[Any, str]]:
    """Shuffle loops whose first offset is half a named value (`step = cols / 2`,
    shuffling by `step`): (loop, name); the name is the width reduced over."""
    for loop in unit.nodes("for_statement"):
        for var, value in _loop_inits(loop):
            value = unwrap(value)
            if value is None or value.type != "binary_expression":
                continue
            left = unwrap(value.child_by_field_name("left"))
            if (
                text_of(value.child_by_field_name("operator")) == "/"
                and const_value(value.child_by_field_name("right")) == 2
                and left is not None
                and left.type == "identifier"
                and _shuffles_with(loop, var)
            ):
                yield loop, text_of(left)


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


def _power_of(node: Any, var: str) -> bool:
    """`1 << var`."""
    node = unwrap(node)
    return (
        node is not None
        and node.type == "binary_expression"
        and text_of(node.child_by_field_name("operator")) == "<<"
        and const_value(node.child_by_field_name("left")) == 1
        and text_of(unwrap(node.child_by_field_name("right"))) == var
    )


def _shuffles_by_power(body: Any, delta: Any, var: str) -> bool:
    """The offset is `1 << var`, or a variable of the loop body set to it
    (`const int delta = 1 << k;`)."""
    delta = unwrap(delta)
    if _power_of(delta, var):
        return True
    if delta.type != "identifier":
        return False
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "declaration":
            for name, value in declared_names(node):
                if name == text_of(delta) and value is not None and _power_of(value, var):
                    return True
        stack.extend(node.named_children)
    return False


def _from_each_lane(loop: Any, var: str) -> bool:
    """`for (i = 0; i < 32; ++i) row[i] = __shfl_sync(mask, v, i);`: a plain
    shuffle (no up/down/xor) reading source lane `i` of the whole warp, lanes
    0 to 31 only. An explicit width (`__shfl_sync(m, v, i, 32)`) keeps the
    reads inside 32-lane groups, which wave64 runs correctly."""
    body = loop.child_by_field_name("body")
    stack = [body] if body is not None else []
    while stack:
        node = stack.pop()
        if node.type == "call_expression":
            name = shuffle_name(node)
            plain = name and not any(w in name.lower() for w in ("up", "down", "xor"))
            if plain:
                args = call_args(node)
                lane = 2 if name.lower().endswith("_sync") else 1
                if len(args) == lane + 1 and text_of(unwrap(args[lane])) == var:
                    return True
        stack.extend(node.named_children)
    return False


def _per_lane_arrays(loop: Any, var: str) -> Iterator[Hit]:
    """The arrays a source-lane loop fills one slot per lane (`rows[i] = ...`),
    where their function declares them 32 long (`int rows[32]`, `float
    w[HAS_W ? 32 : 1]`): a wave64's 64 lanes need 64 slots. The 32 in the
    size is the finding."""
    body = loop.child_by_field_name("body")
    filled = set()
    for node in walk(body) if body is not None else ():
        left = node.child_by_field_name("left") if node.type == "assignment_expression" else None
        if left is not None and left.type == "subscript_expression":
            array, index = left.child_by_field_name("argument"), left.child_by_field_name("indices")
            if array is not None and array.type == "identifier" and index is not None and text_of(index).strip("[] ") == var:
                filled.add(text_of(array))
    function = enclosing_function(loop)
    if not filled or function is None:
        return
    for node in walk(function):
        if node.type != "array_declarator":
            continue
        name, size = node.child_by_field_name("declarator"), node.child_by_field_name("size")
        if name is None or size is None or text_of(name) not in filled:
            continue
        thirty_two = next((p for p in (size, *size.named_children) if p.type == "number_literal" and const_value(p) == 32), None)
        if thirty_two is not None:
            yield Hit(thirty_two.start_byte, thirty_two.end_byte, {"shape": f"`{text_of(name)}`, one slot per source lane"})


def _last_lane(name: str, call: Any) -> Any:
    """The source-lane argument of a plain shuffle given as 31 with no width
    (`__shfl_sync(mask, v, 31)`); with a width the read stays in its group."""
    if any(w in name.lower() for w in ("up", "down", "xor")):
        return None
    args = call_args(call)
    lane = 2 if name.lower().endswith("_sync") else 1
    if len(args) == lane + 1 and const_value(args[lane]) == 31:
        return args[lane]
    return None


def _shuffles_with(loop: Any, var: str, exponent: bool = False) -> bool:
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
            name = shuffle_name(node)
            if name:
                delta = shuffle_delta(name, node)
                if delta is None:
                    continue
                if exponent and _shuffles_by_power(body, delta, var):
                    return True
                if not exponent and var in text_of(delta).replace("(", " ").split():
                    return True
        stack.extend(node.named_children)
    return False


def _exponent_down(loop: Any, start: int) -> bool:
    """`for (k = 4; k >= 0; --k)`: exponents 4 down to 0."""
    update = loop.child_by_field_name("update")
    return (
        start == 4 and update is not None and ("--" in text_of(update) or "-=" in text_of(update))
    )


def _named_half_warp(unit: CudaUnit, loop: Any) -> tuple[str, Any] | None:
    """A loop whose first offset is a constant named for 16 (`#define HALF_WARP 16`,
    `constexpr int kHalf = 16`) defined in this file: (loop variable, the
    definition's value node). A symbolic constant is reported where it is defined."""
    for var, value in _loop_inits(loop):
        value = unwrap(value)
        if value is None or value.type != "identifier":
            continue
        name = text_of(value)
        decl = unit.declarations_in_scope(loop).get(name)
        if decl is not None and decl[1] is not None:
            if const_value(decl[1]) == 16:
                return var, unwrap(decl[1])
            continue
        macro = unit.macros.get(name)
        if macro is not None and eval_constant_text(unit.macro_value(name) or "", unit.macro_value) == 16:
            return var, macro.child_by_field_name("value")
    return None


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    named_seen: set[int] = set()
    for loop in unit.nodes("for_statement"):
        var_start = _loop_variable(loop)
        if var_start is None:
            named = _named_half_warp(unit, loop)
            if named is not None and named[1] is not None and named[1].start_byte not in named_seen:
                var, definition = named
                if _shuffles_with(loop, var):
                    named_seen.add(definition.start_byte)
                    yield Hit(definition.start_byte, definition.end_byte, {"shape": "offsets 16 down to 1, from a named half warp"})
            continue
        var, start = var_start
        downward = start == 16
        upward = start == 1 and _bound(loop, var) in (32, 17)
        if start == 0 and _bound(loop, var) == 32 and _from_each_lane(loop, var):
            init = loop.child_by_field_name("initializer")
            yield Hit(init.start_byte, init.end_byte, {"shape": "source lanes 0 up to 31"})
            yield from _per_lane_arrays(loop, var)
            continue
        if downward or upward:
            if not _shuffles_with(loop, var):
                continue
        elif not (_exponent_down(loop, start) or (start == 0 and _bound(loop, var) == 5)):
            continue
        elif _shuffles_with(loop, var, exponent=True):  # offsets 1 << 4 .. 1 << 0
            downward = start == 4
        else:
            continue
        init = loop.child_by_field_name("initializer")
        shape = f"offsets {'16 down to 1' if downward else '1 up to 16'}"
        yield Hit(init.start_byte, init.end_byte, {"shape": shape})
    # function-like macros that shuffle by one of their parameters (`STEP(16, 32)`
    # unrolled by hand); in macro bodies, the calls are the bodies' own
    roles = {} if unit.in_macros else macro_roles(unit)
    offset_macros = {name: at[DELTA] for name, at in roles.items() if DELTA in at}
    for call in unit.nodes("call_expression"):
        # builtins, and a project's wrappers named like them (`packed_shfl_down_sync`)
        name = shuffle_name(call)
        last = _last_lane(name, call) if name else None
        if last is not None:
            yield Hit(
                last.start_byte,
                last.end_byte,
                {"shape": f"`{name}` from source lane 31 (the last of 32 lanes)"},
            )
        if name:
            delta = shuffle_delta(name, call)
        elif callee_name(call) in offset_macros:
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
