"""PG501: a 32-bit lane mask (full, or a partial hex literal) given to a
*_sync warp function.

A literal is reported where it is passed; a variable or macro holding one is
reported once, at its definition (fixing it there fixes every use). A
function-like macro that hands a parameter on to a *_sync function as its
mask (macro_roles) takes a mask there too, and a macro body's constants are
the file's."""

from __future__ import annotations

import re
from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import (
    CudaUnit,
    Hit,
    call_args,
    callee_name,
    declared_names,
    function_name,
    sole_return,
    unwrap,
)
from portagpu.cuda.warp.common import (
    LIBRARY_MASK_ARGS,
    MASK_SYNC_FUNCTIONS,
    Options,
    is_32bit_declaration,
    is_full_mask_32,
    is_partial_mask_32,
    macro_is_full_mask_32,
)
from portagpu.cuda.warp.macro_roles import (
    MASK,
    library_mask_at,
    macro_parameters_at,
    macro_roles,
    mask_functions,
    parameter_passed_as,
)

REPLACEMENT = "~0ull"
ANY_SYNC = "__*_sync"
# A mask constant named like this is reported even where no *_sync call in the
# same file uses it (a header that defines it for other files).
# Either word order: FULL_MASK, kWarpMask, warp_full_mask, MASK_ALL, MASK_FULL_WARP.
MASK_NAME = re.compile(
    r"^(k_?)?((full|all|warp|lane|active|default|final)_?(warp_?|lane_?|full_?)?mask"
    r"|mask_?(full|all|warp)(_?(warp|lanes?))?)(_?32)?$",
    re.IGNORECASE,
)


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    reported: set[int] = set()
    # where a call passes its mask: the builtins' first argument, a macro's or
    # a wrapper function's mask parameter (macro_roles)
    positions = {**mask_functions(unit), **{name: at[MASK] for name, at in macro_roles(unit).items() if MASK in at}}
    for name, call in unit.calls(MASK_SYNC_FUNCTIONS | positions.keys() | LIBRARY_MASK_ARGS.keys()):
        args = call_args(call)
        if name in MASK_SYNC_FUNCTIONS:
            position = 0
        elif (library := library_mask_at(call)) is not None:  # raft::shfl(v, lane, width, mask)
            position = library
        elif name in positions:
            position = positions[name]
        else:
            continue
        if len(args) <= position or unit.is_guarded(call.start_byte):
            # a call in HIP-guarded code says nothing about the constant it uses
            continue
        mask = unwrap(args[position])
        if mask.type == "call_expression" and callee_name(mask) in _mask_returns(unit):
            hit = _function_mask(unit, callee_name(mask), name, reported)  # `__shfl_sync(full_mask(), ...)`
            if hit is not None:
                yield hit
            continue
        literal = is_full_mask_32(mask)
        if literal:
            yield Hit(
                mask.start_byte,
                mask.end_byte,
                {"mask": literal, "func": name},
                replacement=REPLACEMENT,
            )
            continue
        partial = is_partial_mask_32(mask)
        if partial:  # no 1:1 edit: which 64-bit lanes it means is the author's call
            yield Hit(mask.start_byte, mask.end_byte, {"mask": partial, "func": name})
            continue
        if mask.type != "identifier":
            continue
        ident = text_of(mask)
        if unit.in_macros and ident in macro_parameters_at(unit, call.start_byte):
            continue  # the mask a call site passes (found there)
        hit = _named_mask(unit, call, ident, name, reported)
        if hit is not None:
            yield hit
    for parameter in unit.nodes("optional_parameter_declaration"):
        hit = _default_mask(unit, parameter, reported)
        if hit is not None:
            yield hit

    for ident in [] if unit.in_macros else _mask_returns(unit):
        if MASK_NAME.match(ident):  # defined for other files' calls
            hit = _function_mask(unit, ident, ANY_SYNC, reported)
            if hit is not None:
                yield hit
    for ident, node in [] if unit.in_macros else unit.macros.items():
        if not MASK_NAME.match(ident) or node.start_byte in reported or _used_here(unit, ident):
            # used in this file: only its (unguarded) uses above could make it a finding
            continue
        value = macro_is_full_mask_32(unit, ident)
        if value:
            reported.add(node.start_byte)
            hit = _macro_hit(node, ident, value, ANY_SYNC)
            if hit is not None:
                yield hit
    for decl in unit.nodes("declaration"):
        for ident, init in declared_names(decl):
            init = unwrap(init)
            if init is None or not MASK_NAME.match(ident) or init.start_byte in reported:
                continue
            value = is_full_mask_32(init)
            if value:
                reported.add(init.start_byte)
                yield Hit(
                    init.start_byte,
                    init.end_byte,
                    {"mask": f"{ident} = {value}", "func": ANY_SYNC},
                    replacement=_initializer_replacement(decl),
                )


def _named_mask(unit: CudaUnit, at, ident: str, func: str, reported: set[int]) -> Hit | None:
    """The definition of `ident` as seen from node `at` (a variable's
    initializer or a #define) if it holds a 32-bit full mask not yet reported."""
    decl = _declaration(unit, at, ident)
    if decl is not None and decl[1] is not None:
        init = unwrap(decl[1])
        value = is_full_mask_32(init)
        if value and init.start_byte not in reported:
            reported.add(init.start_byte)
            return Hit(
                init.start_byte,
                init.end_byte,
                {"mask": f"{ident} = {value}", "func": func},
                replacement=_initializer_replacement(decl[0]),
            )
        return None
    value = macro_is_full_mask_32(unit, ident)
    if value and unit.macros[ident].start_byte not in reported:
        reported.add(unit.macros[ident].start_byte)
        return _macro_hit(unit.macros[ident], ident, value, func)
    return None


def _mask_returns(unit: CudaUnit) -> dict[str, tuple[object, object]]:
    """Functions that only return a 32-bit full mask
    (`constexpr unsigned full_mask() { return 0xffffffff; }`): name ->
    (definition, the literal). Such a function is the mask's definition."""
    cached = unit.__dict__.get("_mask_returns")
    if cached is not None:
        return cached
    found = {}
    for function in unit.nodes("function_definition") if "return" in unit.text else ():
        value = unwrap(sole_return(function))
        if value is not None and is_full_mask_32(value) and not unit.is_guarded(function.start_byte):
            found[function_name(function)] = (function, value)
    unit.__dict__["_mask_returns"] = found
    return found


def _function_mask(unit: CudaUnit, ident: str, func: str, reported: set[int]) -> Hit | None:
    """The literal a mask-returning function returns, reported once."""
    found = _mask_returns(unit).get(ident)
    if found is None or found[1].start_byte in reported:
        return None
    function, value = found
    reported.add(value.start_byte)
    return Hit(
        value.start_byte,
        value.end_byte,
        {"mask": f"{ident}() = {is_full_mask_32(value)}", "func": func},
        # `~0ull` is cut back to 32 bits by a 32-bit return type: the type must change too
        replacement=None if is_32bit_declaration(function) else REPLACEMENT,
    )


def _default_mask(unit: CudaUnit, parameter, reported: set[int]) -> Hit | None:
    """A parameter whose default is a 32-bit mask (`unsigned m = 0xffffffff`,
    or a constant or macro holding one: `unsigned m = FULL_MASK`) handed on as
    a *_sync call's mask in its function (macro_roles, as PG508 reads a default
    width): the mask is defined there, so it is reported there."""
    declarator = parameter.child_by_field_name("declarator")
    default = unwrap(parameter.child_by_field_name("default_value"))
    if declarator is None or default is None or declarator.type != "identifier":
        return None
    literal = is_full_mask_32(default) or is_partial_mask_32(default)
    if not literal and default.type != "identifier":
        return None
    name = text_of(declarator)
    func = parameter_passed_as(unit, parameter, name, MASK)
    if not func:
        return None
    if not literal:
        return _named_mask(unit, parameter, text_of(default), func, reported)
    if default.start_byte in reported:
        return None
    reported.add(default.start_byte)
    full = is_full_mask_32(default) is not None  # a partial mask has no 1:1 edit
    return Hit(
        default.start_byte,
        default.end_byte,
        {"mask": f"{name} = {literal}", "func": func},
        replacement=_initializer_replacement(parameter) if full else None,
    )


def _declaration(unit: CudaUnit, call, ident: str):
    """(declaration, initializer) of `ident` where `call` sees it; in a macro
    body, also the file's own file-scope declarations."""
    decl = unit.declarations_in_scope(call).get(ident)
    if decl is None and unit.in_macros:
        decl = unit.origin.declarations_in_scope(unit.origin.root).get(ident)
    return decl


def _initializer_replacement(decl) -> str | None:
    """`~0ull` only where the variable can hold it: in `unsigned m = 0xffffffff`
    it would be cut back to 32 bits, so that edit (one span) fixes nothing;
    the declaration's type must change too (hipify's fixer widens it)."""
    if (
        decl is not None
        and decl.type in ("declaration", "optional_parameter_declaration")
        and is_32bit_declaration(decl)
    ):
        return None
    return REPLACEMENT


def _used_here(unit: CudaUnit, ident: str) -> bool:
    return len(re.findall(rf"\b{re.escape(ident)}\b", unit.text)) > 1


def _macro_hit(node, ident: str, value: str, func: str) -> Hit | None:
    """The span of the mask itself inside `#define NAME value  // comment`."""
    value_node = node.child_by_field_name("value")
    if value_node is None:
        return None
    offset = value_node.text.find(value.encode())
    if offset < 0:
        return None
    start = value_node.start_byte + offset
    return Hit(
        start,
        start + len(value.encode()),
        {"mask": f"{ident} ({value})", "func": func},
        replacement=REPLACEMENT,
    )
