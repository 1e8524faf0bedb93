"""What a warp function's arguments are (lane mask, shuffle offset, width),
also when the call is a function-like macro that hands one of its
parameters on to a warp function, directly or through other macros:

    #define STEP(M, P, D, W) P += __shfl_down_sync(M, P, D, W)
    #define HALVE(M, P, W)   for (int d = W / 2; d > 0; d /= 2) STEP(M, P, d, W)

HALVE's first argument is a lane mask and its third a shuffle width, so
`HALVE(kBits, v, span)` passes `kBits` as a mask and `span` as a width.
Macros defined in HIP-guarded code are left out: their call sites say
nothing about the CUDA branch.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import ChainMap
from collections.abc import Mapping
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import (
    CudaUnit,
    call_args,
    callee_name,
    function_declarator,
    function_name,
    parameter_names,
    unwrap,
)
from portagpu.cuda.warp.common import (
    LIBRARY_MASK_ARGS,
    LIBRARY_NAMESPACES,
    MASK_SYNC_FUNCTIONS,
    SHUFFLES,
)

MASK, DELTA, WIDTH = "mask", "delta", "width"
SHUFFLE_LIKE = re.compile(r"shfl|shuffle", re.IGNORECASE)


def shuffle_name(call: Any) -> str:
    """The callee if it shuffles: a builtin, a wrapper or macro named like one,
    or a method (`tile.shfl_down`)."""
    name = callee_name(call)
    if not name:
        function = call.child_by_field_name("function")
        if function is not None and function.type == "field_expression":
            field = function.child_by_field_name("field")
            name = text_of(field) if field is not None else ""
    return name if name in SHUFFLES or SHUFFLE_LIKE.search(name) else ""


def shuffle_delta(name: str, call: Any) -> Any:
    """The offset (or source lane) argument of a shuffle named `name`."""
    args = call_args(call)
    index = 2 if name.lower().endswith("_sync") and len(args) > 2 else 1
    return args[index] if len(args) > index else None


def _builtin_roles(call: Any) -> list[tuple[str, Any]]:
    """(role, argument) of a call to a CUDA warp builtin (or a shuffle wrapper's offset)."""
    out = []
    name = callee_name(call)
    args = call_args(call)
    if name in MASK_SYNC_FUNCTIONS and args:
        out.append((MASK, args[0]))
    elif (at := library_mask_at(call)) is not None and len(args) > at:
        out.append((MASK, args[at]))
    shuffle = shuffle_name(call)
    if shuffle:
        delta = shuffle_delta(shuffle, call)
        if delta is not None:
            out.append((DELTA, delta))
    if shuffle in SHUFFLES:
        index = 3 if shuffle.endswith("_sync") else 2
        if len(args) > index:
            out.append((WIDTH, args[index]))
    elif shuffle and _WRAPPER_WIDTH.match(shuffle) and call.child_by_field_name("function").type != "field_expression":
        # the project's shuffle wrapper (`shuffle_down(v, offset, width)`, possibly in
        # another header) takes the builtin's order: the width follows the offset
        index = (2 if shuffle.lower().endswith("_sync") else 1) + 1
        if len(args) > index:
            out.append((WIDTH, args[index]))
    return out


def library_mask_at(call: Any) -> int | None:
    """Where a call into a library of LIBRARY_NAMESPACES (`raft::shfl(...)`,
    `MLCommon::any(...)`) takes its lane mask, or None for any other call."""
    at = LIBRARY_MASK_ARGS.get(callee_name(call))
    if at is None:
        return None
    function = call.child_by_field_name("function")
    scope = function.child_by_field_name("scope") if function.type == "qualified_identifier" else None
    return at if scope is not None and text_of(scope) in LIBRARY_NAMESPACES else None


# a wrapper named like the builtins (shfl_down, shuffle_xor, warp_shfl_sync), not
# cub's CamelCase ShuffleIndex<N>(input, lane, member_mask), whose third is a mask
_WRAPPER_WIDTH = re.compile(r"^(?:\w*_)?(?:shfl|shuffle)(?:_(?:up|down|xor|idx|sync))*$")


def _roles_with(call: Any, table: Mapping[str, dict[str, int]]) -> list[tuple[str, Any]]:
    """A call's builtin roles, plus those a macro of `table` gives its arguments."""
    out = _builtin_roles(call)
    passed_on = table.get(callee_name(call))
    if passed_on:
        args = call_args(call)
        out += [(role, args[at]) for role, at in passed_on.items() if at < len(args)]
    return out


def call_roles(unit: CudaUnit, call: Any) -> list[tuple[str, Any]]:
    """(role, argument) for each argument of `call` that reaches a warp
    function as its lane mask, offset or width (through a macro, or as a
    mask through one of the file's own wrapper functions)."""
    table = macro_roles(unit)
    wrappers = mask_functions(unit)
    if wrappers:
        table = {**{name: {MASK: at} for name, at in wrappers.items()}, **table}
    return _roles_with(call, table)


def parameter_passed_as(unit: CudaUnit, parameter: Any, name: str, role: str) -> str:
    """The warp call (or macro) to which a parameter (`template <int width = 32>`,
    `unsigned m = FULL_MASK`) is handed on in its function as the `role`
    argument, or "". Calls in HIP-guarded code do not count."""
    scope = parameter.parent
    while scope is not None and scope.type not in ("template_declaration", "function_definition"):
        scope = scope.parent
    if scope is None:
        return ""
    for call in unit.nodes("call_expression"):
        if scope.start_byte <= call.start_byte < scope.end_byte and not unit.is_guarded(
            call.start_byte
        ):
            for found, arg in call_roles(unit, call):
                arg = unwrap(arg)
                if found == role and arg.type == "identifier" and text_of(arg) == name:
                    return callee_name(call) or text_of(call.child_by_field_name("function"))
    return ""


def macro_roles(unit: CudaUnit) -> dict[str, dict[str, int]]:
    """Function-like macro name -> {role: parameter position} (see above),
    computed once per source file."""
    origin = unit.origin
    cached = origin.__dict__.get("_macro_roles")
    if cached is None:
        cached = origin.__dict__["_macro_roles"] = _compute(origin)
    return cached


def macro_parameters_at(unit: CudaUnit, at: int) -> frozenset[str]:
    """The parameter names of the function-like macro whose body holds byte `at`."""
    bodies = _bodies(unit.origin)
    index = bisect_right(bodies, at, key=lambda b: b[1]) - 1
    if index >= 0 and at < bodies[index][2]:
        return frozenset(bodies[index][3])
    return frozenset()


def _bodies(origin: CudaUnit) -> list[tuple[str, int, int, list[str]]]:
    """(name, body start, body end, parameter names) of the file's unguarded
    function-like macros, by position."""
    cached = origin.__dict__.get("_macro_bodies")
    if cached is not None:
        return cached
    out = []
    for node in origin.nodes("preproc_function_def"):
        name, params, body = (node.child_by_field_name(f) for f in ("name", "parameters", "value"))
        if name is None or params is None or body is None or origin.is_guarded(node.start_byte):
            continue
        names = [text_of(p) for p in params.named_children if p.type == "identifier"]
        out.append((text_of(name), body.start_byte, body.end_byte, names))
    out.sort(key=lambda b: b[1])
    origin.__dict__["_macro_bodies"] = out
    return out


def _compute(origin: CudaUnit) -> dict[str, dict[str, int]]:
    bodies = _bodies(origin)
    inner = origin.macro_unit if bodies else None
    if inner is None:
        return {}
    calls: list[tuple[int, Any]] = []  # (body index, call) for calls inside a body
    for call in inner.nodes("call_expression"):
        index = bisect_right(bodies, call.start_byte, key=lambda b: b[1]) - 1
        if index >= 0 and call.start_byte < bodies[index][2]:
            calls.append((index, call))
    return _passed_on(calls, [(name, params) for name, _, _, params in bodies], {})


def _passed_on(
    calls: list[tuple[int, Any]],
    owners: list[tuple[str, list[str]]],
    table: Mapping[str, dict[str, int]],
    wanted: str | None = None,
) -> dict[str, dict[str, int]]:
    """Owner name -> {role: parameter position}: a parameter of an owner (a
    macro, a function) that a call in its body hands on as an argument in a
    role (a builtin's, one `table` gives, or one an owner took already) takes
    that role; `calls` are (owner index, call). To a fixed point: an owner
    may call one defined after it. Only the role `wanted`, if given."""
    found: dict[str, dict[str, int]] = {}
    known = ChainMap(table, found)  # the table first, as call_roles merges them
    changed = True
    while changed:
        changed = False
        for index, call in calls:
            name, params = owners[index]
            for role, arg in _roles_with(call, known):
                arg = unwrap(arg)
                if (wanted is not None and role != wanted) or arg is None or arg.type != "identifier":
                    continue
                if text_of(arg) not in params:
                    continue
                mine = found.setdefault(name, {})
                if role not in mine:
                    mine[role] = params.index(text_of(arg))
                    changed = True
    return found


def mask_functions(unit: CudaUnit) -> dict[str, int]:
    """The file's own functions that hand a parameter on to a *_sync call as
    its lane mask, directly or through macros or other such functions
    (`shfl(T v, int lane, unsigned mask = FULL) { return __shfl_sync(mask, ...); }`):
    name -> that parameter's position. Overloads share a name: a call to any
    of them passes its mask there. Computed once per source file."""
    origin = unit.origin
    cached = origin.__dict__.get("_mask_functions")
    if cached is None:
        cached = origin.__dict__["_mask_functions"] = _compute_mask_functions(origin)
    return cached


def _compute_mask_functions(origin: CudaUnit) -> dict[str, int]:
    if "_sync" not in origin.text:
        return {}
    functions = []  # (start, end, name, parameter names) of unguarded definitions
    for function in origin.nodes("function_definition"):
        if origin.is_guarded(function.start_byte):
            continue
        declarator = function_declarator(function)
        params = parameter_names(declarator.child_by_field_name("parameters") if declarator is not None else None)
        name = function_name(function)
        if name and any(params):
            functions.append((function.start_byte, function.end_byte, name, params))
    if not functions:
        return {}
    functions.sort()
    calls: list[tuple[int, Any]] = []  # (function index, call) for calls in a body
    for call in origin.nodes("call_expression"):
        index = bisect_right(functions, call.start_byte, key=lambda f: f[0]) - 1
        while index >= 0 and call.start_byte >= functions[index][1]:
            index -= 1  # a call after a nested definition ends: its outer one
        if index >= 0 and not origin.is_guarded(call.start_byte):
            calls.append((index, call))
    owners = [(name, params) for _, _, name, params in functions]
    passed = _passed_on(calls, owners, macro_roles(origin), wanted=MASK)
    return {name: roles[MASK] for name, roles in passed.items()}
