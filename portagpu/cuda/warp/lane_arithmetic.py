"""PG504: lane/warp index arithmetic with the warp width written as 32.

`threadIdx.x % 32`, `tid & 31`, `tid & (32 - 1)`, `tid >> 5`,
`threadIdx.x / 32`, `blockDim.x / 32` (also `/ 32.f`: a fractional warp count),  `N_THREADS / 32`, `lane == 31`, and a
warp-synchronous section `if (tid < 32)`. To keep tile and bit-width
arithmetic out, the left operand must come from the thread index (or a thread
count) and the code must be about warps: the enclosing function uses a warp
primitive, names lanes/warps, or (for `tid < 32`) reduces through `volatile`
shared memory; or the result goes into a lane/warp variable.
Also `NUM_WARPS * 32` and `warp_id * 32`: a count of warps turned into threads,
`32 / ITEMS_PER_WARP` (a warp's lanes shared among the items it holds),
`32 * x128::size` where the file also writes `WARP_SIZE * x128::size` (a warp's
worth of vectors spelled with the literal),
and any `X / 32` whose result is named as a warp count (`CTA_WARPS = SIZE / 32`).
A translation unit that issues warp-collective instructions (inline PTX
`mma.sync`/`ldmatrix`/`shfl.sync`, WMMA) is about warps throughout: its
thread-index arithmetic by 32 is lane/warp arithmetic (a GEMM kernel splitting
`threadIdx.x / 32` into fragment rows).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from portagpu.cuda.parser import text_of, walk
from portagpu.cuda.unit import (
    CudaUnit,
    Hit,
    call_args,
    callee_name,
    const_value,
    enclosing_function,
    float_value,
    function_name,
    outermost,
    unwrap,
)
from portagpu.cuda.warp.ballot_width import ballot_value
from portagpu.cuda.warp.common import WARP_PRIMITIVES, WARPISH_NAME, Options, mentions

# operator -> the constant that makes it warp-width arithmetic
WARP_OPERANDS = {"%": 32, "/": 32, "&": 31, ">>": 5, "==": 31, "!=": 31, "<": 32}
# a comparison marks a warp's lanes only in code that is about warps
COMPARISONS = frozenset({"==", "!=", "<"})
THREAD_SOURCES = frozenset({"threadIdx", "blockDim", "__lane_id", "laneid", "thread_rank"})
THREADISH_NAME = re.compile(
    r"^(t|thread|local)_?(id|idx|x)$|^tid\w*$|^lane\w*$|^thread_?(id|idx|rank)\w*$", re.IGNORECASE
)
# a count of threads: `N_THREADS / 32` is a count of warps (division only)
THREAD_COUNT_NAME = re.compile(
    r"^(n_?|num_?|k_?)?((cta|block)_?)?threads(_?per_?(block|cta))?_?$|^(block|cta)_?(size|threads)_?$"
    r"|^\w+_threads$",
    re.IGNORECASE,
)
WARP_COUNT_NAME = re.compile(r"warp|(^|_)wid(_|$)|wave", re.IGNORECASE)
# a count of warps held in a name (`CTA_WARPS`, `warps_per_block`, `num_warps`)
WARP_TOTAL_NAME = re.compile(r"warps|(^|_)n_?warp(_|$)", re.IGNORECASE)
# warp-collective instructions in inline PTX, and the WMMA API: code built on them
# is laid out for 32-lane warps
COLLECTIVE_PTX = re.compile(
    r"\b(?:mma\.sync|ldmatrix|wgmma|movmatrix|shfl\.sync|vote\.sync|redux\.sync|"
    r"match\.(?:any|all)\.sync|bar\.warp\.sync)\b|\bwmma::"
)


def _thread_derived(unit: CudaUnit, node: Any, depth: int = 0, counts: bool = False) -> bool:
    if depth > 4:
        return False
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            name = text_of(current)
            if (
                name in THREAD_SOURCES
                or THREADISH_NAME.match(name)
                or (counts and THREAD_COUNT_NAME.match(name))
            ):
                return True
            decl = unit.declarations_in_scope(current).get(name)
            if (
                decl is not None
                and decl[1] is not None
                and _thread_derived(unit, decl[1], depth + 1, counts)
            ):
                return True
        elif current.type == "field_identifier" and text_of(current) == "thread_rank":
            return True
        else:
            stack.extend(current.named_children)
    return False


def _result_name(node: Any) -> str:
    node = outermost(node)
    parent = node.parent
    if parent is None:
        return ""
    if parent.type == "init_declarator":
        return text_of(parent.child_by_field_name("declarator"))
    if parent.type == "assignment_expression":
        return text_of(parent.child_by_field_name("left"))
    return ""


def _warp_function(unit: CudaUnit, node: Any, synchronous: bool = False) -> bool:
    """Is the enclosing function about warps? With `synchronous`, a reduction
    through `volatile` shared memory (warp-synchronous code) counts too."""
    function = enclosing_function(node)
    if function is None:
        return False
    cache = unit.__dict__.setdefault("_warp_function_cache", {})
    key = function.start_byte
    if key not in cache:
        cache[key] = (
            mentions(function, WARP_PRIMITIVES)
            or _names_warps(function)
            or bool(_callees(function) & _warp_helpers(unit))
        )
    if cache[key] or (not synchronous and _collective_unit(unit)):
        # (a lane comparison such as `tid < 32` still needs this function to be about warps)
        return True
    return synchronous and b"volatile" in function.text


def _callees(function: Any) -> set[str]:
    body = function.child_by_field_name("body")
    return {callee_name(node) for node in walk(body) if node.type == "call_expression"} if body else set()


def _warp_helpers(unit: CudaUnit) -> frozenset[str]:
    """Names of this unit's functions that issue warp primitives, directly or
    through another such function (`shuffle_had(v, lane)` called with a lane
    index computed as `threadIdx.x & 31` by its caller)."""
    cached = unit.__dict__.get("_warp_helpers")
    if cached is not None:
        return cached
    calls: dict[str, set[str]] = {}
    helpers: set[str] = set()
    for function in unit.nodes("function_definition"):
        name = function_name(function)
        if not name:
            continue
        if mentions(function, WARP_PRIMITIVES):
            helpers.add(name)
        else:
            calls.setdefault(name, set()).update(_callees(function))
    grew = True
    while grew:  # helpers of helpers, to a fixed point
        grew = False
        for name, callees in calls.items():
            if name not in helpers and callees & helpers:
                helpers.add(name)
                grew = True
    cached = unit.__dict__["_warp_helpers"] = frozenset(helpers)
    return cached


def _collective_unit(unit: CudaUnit) -> bool:
    """Does the translation unit issue warp-collective instructions?"""
    flag = unit.__dict__.get("_collective_unit")
    if flag is None:
        flag = unit.__dict__["_collective_unit"] = COLLECTIVE_PTX.search(unit.text) is not None
    return flag


def _names_warps(function: Any) -> bool:
    stack = [function]
    while stack:
        current = stack.pop()
        if current.type == "identifier" and WARPISH_NAME.search(text_of(current)):
            return True
        stack.extend(current.named_children)
    return False


def _warp_section(unit: CudaUnit, node: Any, left: Any) -> bool:
    """`if (tid < 32) {...}`: the test of an if, on a thread index (a lane
    variable is always below 32 on NVIDIA: testing it says nothing)."""
    parent = outermost(node).parent
    if parent is None or parent.type != "condition_clause":
        return False
    name = text_of(unwrap(left))
    return not name.lower().startswith("lane")


# a warp-width symbol: WARP_SIZE, kWarpSize, warpSize, THREADS_PER_WARP
WARP_WIDTH_NAME = re.compile(r"warp_?size|threads_?per_?warp|warp_?threads", re.IGNORECASE)


def _warp_partners(unit: CudaUnit) -> frozenset[str]:
    """What the unit multiplies by its warp-width symbol (`WARP_SIZE * x128::size`
    -> "x128::size"): `32 * x128::size` elsewhere is the same warp's worth."""
    cached = unit.__dict__.get("_warp_partners")
    if cached is None:
        partners = set()
        for node in unit.nodes("binary_expression"):
            op = node.child_by_field_name("operator")
            if op is None or text_of(op) != "*":
                continue
            left, right = (
                unwrap(node.child_by_field_name("left")),
                unwrap(node.child_by_field_name("right")),
            )
            for symbol, other in ((left, right), (right, left)):
                if (
                    symbol is not None
                    and other is not None
                    and symbol.type == "identifier"
                    and (WARP_WIDTH_NAME.search(text_of(symbol)))
                ):
                    partners.add("".join(text_of(other).split()))
        cached = unit.__dict__["_warp_partners"] = frozenset(partners)
    return cached


def _warp_width_product(unit: CudaUnit, node: Any) -> bool:
    """`32 * x128::size` where the unit also writes `WARP_SIZE * x128::size`."""
    left, right = (
        unwrap(node.child_by_field_name("left")),
        unwrap(node.child_by_field_name("right")),
    )
    for const, other in ((left, right), (right, left)):
        if const is not None and other is not None and const_value(const) == 32:
            text = "".join(text_of(other).split())
            if "::" in text and text in _warp_partners(unit):
                return True
    return False


def _warps_to_threads(node: Any) -> bool:
    """`NUM_WARPS * 32`, `32 * warp_id`: a count or index of warps times 32."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    for count, other in ((left, right), (right, left)):
        count = unwrap(count)
        if (
            count is not None
            and count.type in ("identifier", "field_expression", "qualified_identifier")
            and (WARP_COUNT_NAME.search(text_of(count)) and const_value(other) == 32)
        ):
            return True
    return False


# a count of items per warp (`GAUSS_PER_WARP`, `kRowsPerWarp`), not the width itself
PER_WARP_NAME = re.compile(r"per_?warp", re.IGNORECASE)


def _lanes_per_item(node: Any) -> bool:
    """`32 / GAUSS_PER_WARP`: a warp's 32 lanes shared among the items it holds."""
    left, right = (
        unwrap(node.child_by_field_name("left")),
        unwrap(node.child_by_field_name("right")),
    )
    if left is None or right is None or const_value(left) != 32:
        return False
    name = text_of(right)
    return (
        right.type in ("identifier", "qualified_identifier", "field_expression")
        and PER_WARP_NAME.search(name) is not None
        and WARP_WIDTH_NAME.search(name) is None
    )


def _ballot_count(unit: CudaUnit, node: Any) -> bool:
    """`__popc(ballot)`, or a variable holding it: the number of lanes that voted."""
    node = unwrap(node)
    if node is not None and node.type == "identifier":
        decl = unit.declarations_in_scope(node).get(text_of(node))
        node = unwrap(decl[1]) if decl and decl[1] is not None else None
    if (
        node is None
        or node.type != "call_expression"
        or callee_name(node) not in ("__popc", "__popcll")
    ):
        return False
    args = call_args(node)
    return len(args) == 1 and ballot_value(unit, args[0]) is not None


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    for node in unit.nodes("binary_expression"):
        op_node = node.child_by_field_name("operator")
        if op_node is None:
            continue
        op = text_of(op_node)
        if (
            op in ("==", "!=")
            and const_value(node.child_by_field_name("right")) == 32
            and _ballot_count(unit, node.child_by_field_name("left"))
        ):
            # `__popc(ballot) == 32`: "every lane voted" counts 32 lanes
            yield Hit(
                node.start_byte,
                node.end_byte,
                {"expr": " ".join(text_of(node).split()), "op": op, "value": 32},
            )
            continue
        if op == "*":
            if _warps_to_threads(node) or _warp_width_product(unit, node):
                yield Hit(
                    node.start_byte,
                    node.end_byte,
                    {"expr": " ".join(text_of(node).split()), "op": op, "value": 32},
                )
            continue
        right = node.child_by_field_name("right")
        if op == "/" and _lanes_per_item(node):
            yield Hit(
                node.start_byte,
                node.end_byte,
                {"expr": " ".join(text_of(node).split()), "op": op, "value": 32},
            )
            continue
        wanted = WARP_OPERANDS.get(op)
        if wanted is None or not (
            const_value(right) == wanted or (op == "/" and float_value(right) == wanted)
        ):
            continue
        left = node.child_by_field_name("left")
        if left is None:
            continue
        if op == "/" and WARP_TOTAL_NAME.search(_result_name(node)):
            # `CTA_WARPS = RASTER_CTA_SIZE / 32`: whatever is divided, the result counts warps
            yield Hit(
                node.start_byte,
                node.end_byte,
                {"expr": " ".join(text_of(node).split()), "op": op, "value": wanted},
            )
            continue
        if not _thread_derived(unit, left, counts=op in ("/", ">>")):
            continue
        if op == "<" and not _warp_section(unit, node, left):
            continue
        target = _result_name(node)
        if not (WARPISH_NAME.search(target) or _warp_function(unit, node, op in COMPARISONS)):
            continue
        yield Hit(
            node.start_byte,
            node.end_byte,
            {"expr": " ".join(text_of(node).split()), "op": op, "value": wanted},
        )
