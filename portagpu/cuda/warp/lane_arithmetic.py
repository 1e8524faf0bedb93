"""PG504: lane/warp index arithmetic with the warp width written as 32.

`threadIdx.x % 32`, `tid & 31`, `tid >> 5`, `threadIdx.x / 32`, `blockDim.x / 32`.
To keep tile and bit-width arithmetic out, the left operand must come from the
thread index and the code must be about warps: the enclosing function uses a
warp primitive or names lanes/warps, or the result goes into a lane/warp variable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, enclosing_function, int_value, unwrap
from portagpu.cuda.warp.common import WARP_PRIMITIVES, WARPISH_NAME, Options, mentions

# operator -> the literal that makes it warp-width arithmetic
WARP_OPERANDS = {"%": 32, "/": 32, "&": 31, ">>": 5}
THREAD_SOURCES = frozenset({"threadIdx", "blockDim", "__lane_id", "laneid", "thread_rank"})
THREADISH_NAME = re.compile(r"^(t|thread|local)_?(id|idx|x)$|^tid\w*$|^lane\w*$|^thread_?(id|idx|rank)\w*$",
                            re.IGNORECASE)


def _thread_derived(unit: CudaUnit, node: Any, depth: int = 0) -> bool:
    if depth > 4:
        return False
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            name = text_of(current)
            if name in THREAD_SOURCES or THREADISH_NAME.match(name):
                return True
            decl = unit.declarations_in_scope(current).get(name)
            if decl is not None and decl[1] is not None and _thread_derived(
                unit, decl[1], depth + 1
            ):
                return True
        elif current.type == "field_identifier" and text_of(current) == "thread_rank":
            return True
        else:
            stack.extend(current.named_children)
    return False


def _result_name(node: Any) -> str:
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return ""
    if parent.type == "init_declarator":
        return text_of(parent.child_by_field_name("declarator"))
    if parent.type == "assignment_expression":
        return text_of(parent.child_by_field_name("left"))
    return ""


def _warp_function(unit: CudaUnit, node: Any) -> bool:
    function = enclosing_function(node)
    if function is None:
        return False
    cache = unit.__dict__.setdefault("_warp_function_cache", {})
    key = function.start_byte
    if key not in cache:
        cache[key] = mentions(function, WARP_PRIMITIVES) or _names_warps(function)
    return cache[key]


def _names_warps(function: Any) -> bool:
    stack = [function]
    while stack:
        current = stack.pop()
        if current.type == "identifier" and WARPISH_NAME.search(text_of(current)):
            return True
        stack.extend(current.named_children)
    return False


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    for node in unit.nodes("binary_expression"):
        op_node = node.child_by_field_name("operator")
        if op_node is None:
            continue
        op = text_of(op_node)
        wanted = WARP_OPERANDS.get(op)
        if wanted is None:
            continue
        right = unwrap(node.child_by_field_name("right"))
        value = int_value(right)
        if not value or value[0] != wanted:
            continue
        left = node.child_by_field_name("left")
        if left is None or not _thread_derived(unit, left):
            continue
        target = _result_name(node)
        if not (WARPISH_NAME.search(target) or _warp_function(unit, node)):
            continue
        yield Hit(node.start_byte, node.end_byte,
                  {"expr": " ".join(text_of(node).split()), "op": op, "value": wanted})
