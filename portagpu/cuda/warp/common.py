"""Predicates shared by the warp-construct finders."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, call_args, declared_type, int_value, parse_int, unwrap

MASK_SYNC_FUNCTIONS = frozenset({
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync",
    "__match_any_sync", "__match_all_sync",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
    "__syncwarp",
})
SHUFFLES = frozenset({
    "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor",
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
})
BALLOTS = frozenset({"__ballot_sync", "__ballot"})
# warp helpers of RAPIDS' libraries (raft/util/cuda_utils.cuh, cuML's older
# MLCommon copy) that hand a lane mask on to a *_sync builtin: its position
# (`raft::shfl(val, src_lane, width = WarpSize, mask = 0xffffffffu)`). Only
# calls qualified with one of these namespaces: a project's own `shfl` may
# order its arguments otherwise.
LIBRARY_MASK_ARGS = {"shfl": 3, "shfl_xor": 3, "any": 1, "all": 1}
LIBRARY_NAMESPACES = frozenset({"raft", "MLCommon"})
WARP_PRIMITIVES = MASK_SYNC_FUNCTIONS | SHUFFLES | BALLOTS | frozenset(
    {"__activemask", "__any", "__all", "__lane_id"}
)
FULL32 = 0xFFFFFFFF
UNSIGNED_32_CASTS = frozenset(
    {"unsigned", "unsigned int", "uint32_t", "std::uint32_t", "uint", "unsigned int32_t"}
)
# a finder's data: the `options:` of the rule that names it (rules/*.yaml)
Options = Mapping[str, Any]

WARPISH_NAME = re.compile(r"lane|warp|(^|_)wid(_|$)|wave", re.IGNORECASE)


def is_partial_mask_32(node: Any) -> str | None:
    """The text of node if it is a hex literal lane mask of fewer than 32 ones
    held in 32 bits (`0x0000ffff`, a mistyped `0xfffffff`), else None: HIP's
    *_sync functions reject any mask narrower than 64 bits."""
    node = unwrap(node)
    value = int_value(node)
    text = text_of(node) if value else ""
    if value and text.lower().startswith("0x") and "l" not in value[1] and 0 < value[0] < FULL32:
        return text
    return None


def is_full_mask_32(node: Any) -> str | None:
    """The text of node if it is a 32-bit all-ones mask, else None.

    0xffffffff (no L suffix), ~0u, -1u, UINT32_MAX, UINT_MAX, uint32_t(-1),
    (unsigned)-1, static_cast<unsigned>(-1 / ~0), and a plain int `~0` or
    `-1`: its value widens to 64 ones, but its type is 32 bits, which HIP's
    *_sync functions reject (ROCm 6.3+: "The mask must be a 64-bit integer").
    `~0ull`, `~0ul` and `-1ll` are 64-bit and fine.
    """
    node = unwrap(node)
    if node is None:
        return None
    text = " ".join(text_of(node).split())
    kind = node.type
    if kind == "number_literal":  # tree-sitter reads `-1` and `-1u` as one literal
        negative = text.startswith("-")
        value = parse_int(text[1:] if negative else text)
        if value and "l" not in value[1] and value[0] == (1 if negative else FULL32):
            return text
        return None
    if kind == "identifier" and text in ("UINT32_MAX", "UINT_MAX"):
        return text
    if kind == "unary_expression":
        op = node.child_by_field_name("operator")
        arg = unwrap(node.child_by_field_name("argument"))
        value = int_value(arg)
        if op is not None and value and "l" not in value[1]:
            if (text_of(op) == "~" and value[0] == 0) or (text_of(op) == "-" and value[0] == 1):
                return text
        return None
    if kind in ("cast_expression", "call_expression"):
        if kind == "cast_expression":
            type_node = node.child_by_field_name("type")
            value_node = node.child_by_field_name("value")
            type_text = " ".join(text_of(type_node).split()) if type_node is not None else ""
        else:
            function = node.child_by_field_name("function")
            args = call_args(node)
            type_text = ""
            value_node = args[0] if len(args) == 1 else None
            if function is not None and function.type in ("template_function",):
                name = text_of(function.child_by_field_name("name"))
                targs = function.child_by_field_name("arguments")
                if name == "static_cast" and targs is not None:
                    type_text = " ".join(text_of(targs).strip("<>").split())
            elif function is not None:
                type_text = " ".join(text_of(function).split())
        if type_text in UNSIGNED_32_CASTS and value_node is not None and _is_all_ones(value_node):
            return text
    return None


def _is_all_ones(node: Any) -> bool:
    node = unwrap(node)
    text = "".join(text_of(node).split())
    return text in ("-1", "~0", "~0u", "~0U", "0xffffffff", "0xFFFFFFFF") or (
        node.type == "number_literal" and (int_value(node) or (0,))[0] == FULL32
    )


def macro_is_full_mask_32(unit: CudaUnit, name: str) -> str | None:
    """If macro `name` expands to a 32-bit full mask, its value text."""
    value = unit.macro_value(name)
    if not value:
        return None
    cache = unit.__dict__.setdefault("_mask_macro_cache", {})
    if value not in cache:
        from portagpu.cuda.parser import parse

        tree = parse(f"auto __pg_probe = {value};")
        init = None
        for node in _iter(tree.root_node):
            if node.type == "init_declarator":
                init = node.child_by_field_name("value")
                break
        cache[value] = is_full_mask_32(init) if init is not None else None
        if cache[value] is None:
            parsed = parse_int(value.strip("()"))
            if parsed and parsed[0] == FULL32 and "l" not in parsed[1]:
                cache[value] = value
    return cache[value]


def _iter(node: Any):
    yield node
    for child in node.children:
        yield from _iter(child)


def mentions(node: Any, names: frozenset[str] | set[str]) -> bool:
    """Does the subtree call or name any of `names`?"""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier" and text_of(current) in names:
            return True
        stack.extend(current.children)
    return False


def is_32bit_declaration(decl: Any) -> bool:
    from portagpu.cuda.unit import is_32bit_type

    return is_32bit_type(declared_type(decl))
