"""Rewrites of the 32-lane assumptions hipify leaves alone, driven by the
findings of the PG5xx checkers (so the linter and the translator agree).

Each fixer turns one finding into byte edits of the original CUDA text, or
returns None when the construct needs a person (it is then reported)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, const_value, float_value, int_value, unwrap

WARP = "PORTAGPU_WARP_SIZE"
SHIFT = "PORTAGPU_WARP_SHIFT"
FULL_MASK = "PORTAGPU_FULL_MASK"
WIDE_TYPE = "unsigned long long"


def typed_warp(suffix: str, constant: str = WARP) -> str:
    """PORTAGPU_WARP_SIZE (or another constant) with the type a literal's suffix
    gave it (`32U` is unsigned)."""
    kind = {"u": "unsigned", "l": "long", "ul": "unsigned long", "lu": "unsigned long",
            "ll": "long long", "ull": "unsigned long long", "llu": "unsigned long long"}.get(
        suffix.lower())
    return f"(({kind}){constant})" if kind else constant


@dataclass(frozen=True)
class ByteEdit:
    start: int
    end: int
    text: str


Fixer = Callable[[CudaUnit, Hit], "list[ByteEdit] | None"]


def _node(unit: CudaUnit, hit: Hit) -> Any:
    """The smallest node spanning the hit. A hit found in macro bodies may lie
    in the file itself (the constant a body uses): the tree where the span is
    tightest, the file's or the bodies', holds it."""
    parts = [unit] if unit.origin is unit else [unit, unit.origin]
    found = [_spanning(part, hit) for part in parts]
    found = [node for node in found if node is not None]
    return min(found, key=lambda n: n.end_byte - n.start_byte) if found else None


def _spanning(unit: CudaUnit, hit: Hit) -> Any:
    node = unit.root.descendant_for_byte_range(hit.start, hit.end)
    # climb to the node that spans exactly the hit (leaves may be smaller)
    while node is not None and node.parent is not None and (
        node.start_byte > hit.start or node.end_byte < hit.end
    ):
        node = node.parent
    return node


def _widen_declaration(decl: Any) -> list[ByteEdit]:
    """Replace the type words of a declaration by `unsigned long long`."""
    types = [c for c in decl.children if c.type in (
        "primitive_type", "sized_type_specifier", "type_identifier")]
    if not types:
        return []
    return [ByteEdit(types[0].start_byte, types[-1].end_byte, WIDE_TYPE)]


def _declaration_of(node: Any) -> Any:
    while node is not None and node.type != "declaration":
        if node.type in ("compound_statement", "function_definition"):
            return None
        node = node.parent
    return node


def fix_lane_mask(unit: CudaUnit, hit: Hit) -> list[ByteEdit] | None:
    edits = [ByteEdit(hit.start, hit.end, FULL_MASK)]
    node = _node(unit, hit)
    decl = _declaration_of(node) if node is not None else None
    if node is not None and node.parent is not None:
        parent = node.parent  # a parameter's default (`unsigned m = 0xffffffff`)
        if parent.type == "optional_parameter_declaration":
            decl = parent
        elif parent.type == "return_statement":  # `unsigned full_mask() { return 0xffffffff; }`
            function = parent.parent.parent if parent.parent is not None else None
            decl = function if function is not None and function.type == "function_definition" else None
    if decl is not None:
        from portagpu.cuda.warp.common import is_32bit_declaration

        if is_32bit_declaration(decl):
            edits += _widen_declaration(decl)
    return edits


def fix_narrow_store(unit: CudaUnit, hit: Hit) -> list[ByteEdit] | None:
    if hit.replacement:  # __popc(ballot) -> __popcll(ballot)
        return [ByteEdit(hit.start, hit.end, hit.replacement)]
    node = _node(unit, hit)
    if node is not None and node.parent is not None and node.parent.type == "function_definition":
        return _widen_declaration(node.parent) or None  # a ballot function's 32-bit return type
    decl = _declaration_of(node)
    if decl is None:  # `m = __ballot_sync(...)` into a variable declared earlier
        found = unit.declarations_in_scope(node).get(str(hit.values.get("var", "")))
        decl = found[0] if found is not None and found[0].type == "declaration" else None
    return (_widen_declaration(decl) or None) if decl is not None else None


def _replace_operand(node: Any, op_values: dict[str, str]) -> list[ByteEdit] | None:
    op = text_of(node.child_by_field_name("operator"))
    right = node.child_by_field_name("right")
    if op not in op_values or right is None:
        return None
    return [ByteEdit(right.start_byte, right.end_byte, op_values[op])]


def fix_lane_arithmetic(unit: CudaUnit, hit: Hit) -> list[ByteEdit] | None:
    node = _node(unit, hit)
    if node is None or node.type != "binary_expression":
        return None
    right = node.child_by_field_name("right")
    if const_value(right) is None and float_value(right) is None:
        return None  # `32 / ITEMS_PER_WARP`: the 32 is on the left, the split needs a person
    # `tid < 32` (a warp-synchronous section) and `NUM_WARPS * 32` need a person
    last = f"({WARP} - 1)"
    # `blockDim.x / 32.f` counts a partial warp: the division must stay fractional
    per_warp = f"((float){WARP})" if float_value(node.child_by_field_name("right")) else WARP
    return _replace_operand(node, {"%": WARP, "/": per_warp, "&": last, ">>": SHIFT, "==": last, "!=": last})


def fix_shared_array(unit: CudaUnit, hit: Hit) -> list[ByteEdit] | None:
    node = unwrap(_node(unit, hit))
    if node is None or node.type != "binary_expression":
        return None
    return _replace_operand(node, {"/": WARP, ">>": SHIFT})


def _literal_within(node: Any, value: int) -> Any:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "number_literal" and (int_value(current) or (None,))[0] == value:
            return current
        stack.extend(reversed(current.named_children))
    return None


def fix_shuffle_loop(unit: CudaUnit, hit: Hit) -> list[ByteEdit] | None:
    node = _node(unit, hit)
    if node is None:
        return None
    loop = node if node.type == "for_statement" else node.parent
    if loop is None or loop.type != "for_statement":
        return None  # an unrolled shuffle with offset 16: needs an added step, reported
    init = loop.child_by_field_name("initializer")
    start = _literal_within(init, 16) if init is not None else None
    if start is not None:
        return [ByteEdit(start.start_byte, start.end_byte, f"({WARP} / 2)")]
    cond = loop.child_by_field_name("condition")
    bound = _literal_within(cond, 32) if cond is not None else None
    if bound is not None:
        return [ByteEdit(bound.start_byte, bound.end_byte, WARP)]
    return None


def fix_warp_size_constant(unit: CudaUnit, hit: Hit) -> list[ByteEdit] | None:
    from portagpu.cuda.warp.warp_size_constant import LOG_NAMES

    node = _node(unit, hit)
    if node is None:
        return None
    # the width itself (32 -> PORTAGPU_WARP_SIZE) or its log2 (5 -> PORTAGPU_WARP_SHIFT)
    log2 = bool(LOG_NAMES.match(str(hit.values.get("name", ""))))
    number, constant = (5, SHIFT) if log2 else (32, WARP)
    if node.type == "preproc_def":
        value = node.child_by_field_name("value")
        if value is None:
            return None
        # preproc_arg is unparsed text: the number with its suffix (`32U` stays unsigned)
        match = re.search(rb"\b%d([uUlL]*)\b" % number, value.text)
        if match is None:
            return None
        start = value.start_byte + match.start()
        return [ByteEdit(start, value.start_byte + match.end(), typed_warp(match.group(1).decode(), constant))]
    literal = _literal_within(node, number)
    if literal is None:
        return None
    suffix = (int_value(literal) or (0, ""))[1]
    return [ByteEdit(literal.start_byte, literal.end_byte, typed_warp(suffix, constant))]


def fix_warpsize_constant_context(unit: CudaUnit, hit: Hit) -> list[ByteEdit] | None:
    return [ByteEdit(hit.start, hit.end, WARP)]


FIXERS: dict[str, Fixer] = {
    "lane_mask": fix_lane_mask,
    "activemask_width": fix_narrow_store,
    "ballot_width": fix_narrow_store,
    "lane_arithmetic": fix_lane_arithmetic,
    "shared_warp_array": fix_shared_array,
    "shuffle_loop": fix_shuffle_loop,
    "warp_size_constant": fix_warp_size_constant,
    "warpsize_constexpr": fix_warpsize_constant_context,
}
