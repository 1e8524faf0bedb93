"""PG510: a launch that gives each warp 32 threads, for a kernel that splits
its work by the run-time `warpSize`.

The kernel is portable (`warp = tid / warpSize`, `col += warpSize`); the host
arithmetic that sizes its launch is not: `ceil_div(rows * 32, block)` blocks
for one warp per row, `cols / 32` blocks of one warp-wide column strip each,
`dim3 block(32, n)` rows of one warp, `<<<grid, 32>>>`. On a wave64 GPU
warpSize is 64, so half the rows or columns are never touched, or a "warp"
spans two rows. Only launches of a kernel defined in the same file (or in its
macros) that uses warpSize as a width are judged; a 32 that PG504 already
reports (a thread count or a warp count times 32) is left to it.

The launch may sit in a function-like macro that a host function invokes
(`LAUNCH(kernel)` with `<<<grid, block>>>` in its body): its grid and block
are then the invoking function's."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from portagpu.cuda.launches import declared_value, launches
from portagpu.cuda.parser import text_of, walk
from portagpu.cuda.unit import (
    CudaUnit,
    Hit,
    callee_name,
    const_value,
    function_name,
    unwrap,
)
from portagpu.lint.cuda.registry import checker
from portagpu.lint.model import Rule

_COMPOUND = frozenset({"+=", "-=", "*=", "/=", "%="})
# a thread count or a count of warps times 32: PG504's (lane_arithmetic)
_PG504_OPERAND = ("thread", "warp", "blockDim", "block_size", "BLOCK_SIZE", "blockSize")


@checker("launch_width")
def launch_width(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    if unit.in_macros:
        return  # the source's call covers its macro bodies (their launches use its hosts' names)
    kernels = _warpsize_kernels(unit.units())
    if not kernels:
        return
    for launch in launches(unit):
        if launch.kernel not in kernels:
            continue
        for index, expr in enumerate(launch.shapes):
            for site in _sites(unit, expr, index == 1, launch.scope):
                yield Hit(site.start_byte, site.end_byte, {"expr": " ".join(text_of(site).split()), "kernel": launch.kernel})


def _warpsize_kernels(parts: Iterable[CudaUnit]) -> frozenset[str]:
    """Names of the __global__ functions that use warpSize as a width."""
    names = set()
    for part in parts:
        for function in part.nodes("function_definition"):
            if any(child.type == "__global__" for child in function.children) and _uses_warpsize(function):
                names.add(function_name(function))
    return frozenset(names)


def _uses_warpsize(function: Any) -> bool:
    """Whether the kernel maps threads to work by warpSize: `tid / warpSize`,
    `tid % warpSize`, `warpSize * i`, `c += warpSize`, `tid & (warpSize - 1)`.
    Not `warpSize / 2` (a shuffle loop's first offset: a reduction, which
    says nothing of how rows or columns are split) nor a test of it."""
    body = function.child_by_field_name("body")
    for node in walk(body) if body is not None else ():
        if node.type != "identifier" or text_of(node) != "warpSize":
            continue
        child, parent = node, node.parent
        while parent is not None and parent.type == "parenthesized_expression":
            child, parent = parent, parent.parent
        if parent is None:
            continue
        op = parent.child_by_field_name("operator")
        op_text = text_of(op) if op is not None else ""
        if parent.type == "assignment_expression":
            if op_text in _COMPOUND and parent.child_by_field_name("right") == child:
                return True
            continue
        if parent.type != "binary_expression":
            continue
        is_right = parent.child_by_field_name("right") == child
        if op_text == "*" or (op_text in ("/", "%") and is_right) or op_text == "-" and _masks_lanes(parent):
            return True
    return False


def _masks_lanes(difference: Any) -> bool:
    """`warpSize - 1` under an `&`: a lane id."""
    parent = difference.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    op = parent.child_by_field_name("operator") if parent is not None and parent.type == "binary_expression" else None
    return op is not None and text_of(op) == "&"


def _sites(unit: CudaUnit, expr: Any, is_block: bool, scope: Any) -> Iterator[Any]:
    """The 32s of one launch argument, and of the values of the names it
    uses (one level), those names read where `scope` stands."""
    exprs = [expr]
    for node in walk(expr):
        if node.type == "identifier":
            value = declared_value(unit, text_of(node), scope)
            if value is not None:
                exprs.append(value)
    seen = set()
    for root in exprs:
        for site in _thirty_twos(root, is_block):
            if site.start_byte not in seen:
                seen.add(site.start_byte)
                yield site


def _thirty_twos(root: Any, is_block: bool) -> Iterator[Any]:
    root = unwrap(root)
    if is_block:
        first = _first_dimension(root)
        if first is not None and const_value(first) == 32:
            yield first
    for node in walk(root):
        if node.type != "binary_expression":
            continue
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or left is None or right is None:
            continue
        op_text = text_of(op)
        if op_text == "/" and const_value(right) == 32:
            other = left
        elif op_text == "*" and const_value(right) == 32:
            other = left
        elif op_text == "*" and const_value(left) == 32:
            other = right
        else:
            continue
        if not any(word in text_of(other) for word in _PG504_OPERAND):
            yield node


def _first_dimension(node: Any) -> Any:
    """The x extent of a block: the value itself, `dim3(32, n)`'s first
    argument, or that of a `(32, n)` / `{32, n}` declarator value."""
    if node is None:
        return None
    if node.type == "call_expression" and callee_name(node) == "dim3":
        node = node.child_by_field_name("arguments")
    if node is not None and node.type in ("argument_list", "initializer_list"):
        return node.named_children[0] if node.named_children else None
    return node
