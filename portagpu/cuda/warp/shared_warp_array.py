"""PG507: __shared__ arrays with one slot per warp, sized `blockDim.x / 32`,
`BLOCK / 32` or `BLOCK >> 5`: on a 64-wide wavefront the count is wrong. An
array so sized but indexed only by a non-warp index (`s[t / 16]`) is data.

Also a block reduction's scratch `__shared__ T s[32]` (or `s[32][N]`) that is written per warp
(`s[wid] = v`) and read back by lane under a 32-lane warp count
(`threadIdx.x < blockDim.x / 32.f ? s[lane] : 0`): on wave64 half as many
slots are written as the readback reads. An array merely sized 32 (read back
under a `warpSize` count, or not by lane) is over-allocation, and clean.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import (
    CudaUnit,
    Hit,
    const_value,
    enclosing_function,
    float_value,
    int_value,
    unwrap,
)
from portagpu.cuda.warp.common import Options
from portagpu.cuda.warp.lane_arithmetic import WARP_COUNT_NAME

DIVISORS = {"/": 32, ">>": 5}


def _is_shared(decl: Any) -> bool:
    return any(c.type == "type_qualifier" and text_of(c) == "__shared__" for c in decl.children)


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    for decl in unit.nodes("declaration"):
        if not _is_shared(decl):
            continue
        stack = list(decl.children_by_field_name("declarator"))
        while stack:
            node = stack.pop()
            if node.type == "array_declarator":
                size = unwrap(node.child_by_field_name("size"))
                if size is not None and size.type == "binary_expression":
                    op = text_of(size.child_by_field_name("operator"))
                    parsed = int_value(size.child_by_field_name("right"))
                    if (
                        op in DIVISORS
                        and parsed
                        and parsed[0] == DIVISORS[op]
                        and not _data_tile(node)
                    ):
                        yield Hit(
                            size.start_byte,
                            size.end_byte,
                            {"size": " ".join(text_of(size).split())},
                        )
            if node.type == "array_declarator" and node.parent.type != "array_declarator":
                size = _per_warp_dimension(unit, node)
                if size is not None:
                    yield Hit(
                        size.start_byte, size.end_byte, {"size": " ".join(text_of(node).split())}
                    )
            stack.extend(node.named_children)


def _data_tile(array: Any) -> bool:
    """`__shared__ T s[N / 32]` indexed only by something that is not a warp
    index (`s[t / 16]`: one scale per 32 elements): a data tile, not per-warp
    slots. An array never subscripted (or only at constants) stays a per-warp guess."""
    name_node = array.child_by_field_name("declarator")
    function = enclosing_function(array)
    if function is None or name_node is None or name_node.type != "identifier":
        return False
    indices = []
    for sub in _subscripts(function, text_of(name_node)):
        index = sub.child_by_field_name("indices")
        if (
            index is not None
            and index.named_children
            and const_value(index.named_children[0]) is None
        ):
            indices.append(index.named_children[0])  # `s[0]` says nothing either way
    return bool(indices) and not any(_warp_index(i) for i in indices)


def _per_warp_dimension(unit: CudaUnit, array: Any) -> Any:
    """The size node of a dimension of 32 (`s[32]`, `s[32][N]` warps first,
    `s[N][32]` warps last) that is written at a warp index and read at a lane
    index under a count of 32-lane warps, in the function that declares it."""
    sizes = []  # outermost declarator first: `s[A][B]` nests s[A] inside [B]
    node = array
    while node is not None and node.type == "array_declarator":
        sizes.append(node.child_by_field_name("size"))
        node = node.child_by_field_name("declarator")
    sizes.reverse()
    dims = [d for d, size in enumerate(sizes) if size is not None and const_value(size) == 32]
    function = enclosing_function(array)
    if not dims or function is None or node is None or node.type != "identifier":
        return None
    written: set[int] = set()
    read_back: set[int] = set()
    for sub in _subscripts(function, text_of(node)):
        indices, whole = _indices(sub)
        parent = whole.parent
        is_write = (
            parent is not None
            and parent.type == "assignment_expression"
            and parent.child_by_field_name("left") == whole
        )
        for dim in dims:
            if dim >= len(indices):
                continue
            if is_write:
                if _warp_index(indices[dim]):
                    written.add(dim)
            elif _lane_index(indices[dim]) and _under_32_lane_count(unit, sub):
                read_back.add(dim)
    both = sorted(written & read_back)
    return sizes[both[0]] if both else None


def _indices(sub: Any) -> tuple[list[Any], Any]:
    """The indices of `s[i][j]...` from its innermost subscript `s[i]`, and the
    outermost subscript expression."""
    indices, whole = [], sub
    while True:
        index = whole.child_by_field_name("indices")
        indices.append(
            index.named_children[0] if index is not None and index.named_children else None
        )
        parent = whole.parent
        if (
            parent is None
            or parent.type != "subscript_expression"
            or (parent.child_by_field_name("argument") != whole)
        ):
            return indices, whole
        whole = parent


def _subscripts(function: Any, name: str) -> Iterator[Any]:
    stack = [function]
    while stack:
        node = stack.pop()
        if node.type == "subscript_expression":
            argument = node.child_by_field_name("argument")
            if argument is not None and argument.type == "identifier" and text_of(argument) == name:
                yield node
        stack.extend(node.named_children)


def _warp_index(node: Any) -> bool:
    node = unwrap(node)
    if node.type == "identifier":
        return bool(WARP_COUNT_NAME.search(text_of(node)))
    return _counts_32_lane_warps(node) or "warpSize" in text_of(node)


def _lane_index(node: Any) -> bool:
    node = unwrap(node)
    text = text_of(node)
    if node.type == "identifier":
        return text.lower().startswith("lane")
    return node.type == "field_expression" and text.replace(" ", "") == "threadIdx.x"


def _counts_32_lane_warps(node: Any) -> bool:
    """A `/ 32` (or `/ 32.f`) or `>> 5` somewhere in the expression."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "binary_expression":
            op = text_of(current.child_by_field_name("operator"))
            right = current.child_by_field_name("right")
            if op == "/" and (const_value(right) == 32 or float_value(right) == 32):
                return True
            if op == ">>" and const_value(right) == 5:
                return True
        stack.extend(current.named_children)
    return False


def _under_32_lane_count(unit: CudaUnit, node: Any) -> bool:
    """The read sits in a branch (`?:`, `if`) whose test counts 32-lane warps,
    directly or through a variable (`bool live = tid < blockDim.x / 32.f`)."""
    child, parent = node, node.parent
    while parent is not None and parent.type != "function_definition":
        test = None
        if (
            parent.type == "conditional_expression"
            and parent.child_by_field_name("condition") != child
        ):
            test = parent.child_by_field_name("condition")
        elif parent.type == "if_statement" and parent.child_by_field_name("condition") != child:
            test = parent.child_by_field_name("condition")
        if test is not None and _test_counts_32_lane_warps(unit, test):
            return True
        child, parent = parent, parent.parent
    return False


def _test_counts_32_lane_warps(unit: CudaUnit, test: Any) -> bool:
    if _counts_32_lane_warps(test):
        return True
    stack = [test]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            decl = unit.declarations_in_scope(current).get(text_of(current))
            if decl is not None and decl[1] is not None and _counts_32_lane_warps(decl[1]):
                return True
        stack.extend(current.named_children)
    return False
