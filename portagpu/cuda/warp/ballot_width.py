"""PG503: a ballot result kept in 32 bits, counted with __popc/__ffs/__clz,
combined (`&`, `|`, `^`) with a 32-bit value (`__ballot_sync(m, p) & lanemask_lt()`
where lanemask_lt returns a 32-bit type), or compared with a 32-bit full mask
(`__ballot_sync(m, p) == ~0u`, "every lane voted"): the upper 32 lanes are
dropped, or a full wave64 vote never equals the mask.

A project's own ballot function counts as a ballot where its result is kept:
one defined in the file whose return value is a ballot (`return
__ballot_sync(m, p)`, or a variable holding one), or, defined in another file,
one named like a ballot (`ballot`, `warp_ballot`, `warpBallot`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import (
    CudaUnit,
    Hit,
    call_args,
    callee_name,
    callee_name_of,
    enclosing_function,
    function_name,
    outermost,
    unwrap,
)
from portagpu.cuda.warp.common import BALLOTS, Options, is_32bit_declaration, is_full_mask_32

BIT_COUNTS_32 = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll", "__brev": "__brevll"}
# Only these keep their meaning at 64 bits; `31 - __clz(b)` or `__brev(b)` around
# a ballot needs the surrounding arithmetic changed too, so a person does it.
SAFE_WIDENING = frozenset({"__popc", "__ffs"})


# a ballot's value keeps its width through these (a cast to a 32-bit type is
# still a 32-bit store)
_VALUE_WRAPPERS = ("parenthesized_expression", "cast_expression")


def _assigned_32bit(unit: CudaUnit, call: Any) -> str | None:
    """Name of the 32-bit variable the call's value is stored in, if any."""
    node = outermost(call, _VALUE_WRAPPERS)
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
        decl = parent.parent
        if decl is not None and decl.type == "declaration" and is_32bit_declaration(decl):
            return text_of(parent.child_by_field_name("declarator"))
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            decl = unit.declarations_in_scope(call).get(text_of(left))
            if decl is not None and decl[0].type == "declaration" and is_32bit_declaration(decl[0]):
                return text_of(left)
    return None


def narrow_stores(unit: CudaUnit, producers: frozenset[str]) -> Iterator[tuple[str, Any, str]]:
    for name, call in unit.calls(producers):
        target = _assigned_32bit(unit, call)
        if target:
            yield name, call, target


# a function of another file taken for a ballot wrapper by its name alone
BALLOT_NAME = re.compile(r"^(?!__)(?:\w*_|\w*[a-z0-9](?=Ballot))?(?:ballot|Ballot)(?:_?[Ss]ync)?$")


def ballot_producers(unit: CudaUnit) -> frozenset[str]:
    """The builtins, plus the project's ballot functions this file calls (above)."""
    cached = unit.__dict__.get("_ballot_producers")
    if cached is not None:
        return cached
    defined = _ballot_definitions(unit)
    named = {
        name
        for call in unit.nodes("call_expression")
        if (name := callee_name(call)) not in defined and BALLOT_NAME.match(name)
    }
    cached = BALLOTS | named | {name for name, wraps in defined.items() if wraps}
    unit.__dict__["_ballot_producers"] = cached
    return cached


def _ballot_definitions(unit: CudaUnit) -> dict[str, bool]:
    """Name of each function defined in the file -> does it return a ballot?
    (A wrapper of a wrapper too.)"""
    functions: dict[str, list[Any]] = {}
    for function in unit.nodes("function_definition"):
        declarator = function.child_by_field_name("declarator")
        inner = declarator.child_by_field_name("declarator") if declarator is not None else None
        if (
            declarator is not None
            and declarator.type == "function_declarator"
            and inner is not None
        ):
            functions.setdefault(callee_name_of(inner), []).append(function)
    wrappers: dict[str, bool] = dict.fromkeys(functions, False)
    returns = unit.nodes("return_statement")
    changed = True
    while changed:
        changed = False
        producers = BALLOTS | {name for name, wraps in wrappers.items() if wraps}
        for name, bodies in functions.items():
            if not wrappers[name] and any(
                any(producer.encode() in body.text for producer in producers)  # cheap test first
                and _returns_value_of(unit, body, returns, producers)
                for body in bodies
            ):
                wrappers[name] = changed = True
    return wrappers


def _returns_value_of(unit: CudaUnit, function: Any, returns: list[Any], producers) -> bool:
    """Does `function` return a call to one of `producers`, or a variable
    initialised or assigned with one?"""
    for statement in returns:
        if not function.start_byte <= statement.start_byte < function.end_byte:
            continue
        if enclosing_function(statement) != function or not statement.named_children:
            continue  # a lambda's return
        value = _uncast(statement.named_children[0])
        if _is_call_to(value, producers):
            return True
        if value is None or value.type != "identifier":
            continue
        name = text_of(value)
        decl = unit.declarations_in_scope(statement).get(name)
        if decl is not None and _is_call_to(_uncast(decl[1]), producers):
            return True
        for assignment in unit.nodes("assignment_expression"):
            if function.start_byte <= assignment.start_byte < function.end_byte:
                left = assignment.child_by_field_name("left")
                right = _uncast(assignment.child_by_field_name("right"))
                if left is not None and text_of(left) == name and _is_call_to(right, producers):
                    return True
    return False


def _uncast(node: Any) -> Any:
    node = unwrap(node)
    while node is not None and node.type == "cast_expression":
        node = unwrap(node.child_by_field_name("value"))
    return node


def _is_call_to(node: Any, names: frozenset[str]) -> bool:
    return node is not None and node.type == "call_expression" and callee_name(node) in names


def _returns_32bit(unit: CudaUnit, name: str) -> bool:
    for function in unit.nodes("function_definition"):
        declarator = function.child_by_field_name("declarator")
        inner = declarator.child_by_field_name("declarator") if declarator is not None else None
        if inner is not None and text_of(inner) == name:
            return is_32bit_declaration(function)
    return False


def _narrow_returns(unit: CudaUnit) -> Iterator[Hit]:
    """A ballot function of the file declared to return 32 bits
    (`unsigned int ballot(int p) { return __ballot_sync(m, p); }`): every
    caller gets the low 32 lanes. Reported at the return type."""
    wrappers = {name for name, wraps in _ballot_definitions(unit).items() if wraps}
    if not wrappers:
        return
    for function in unit.nodes("function_definition"):
        name = function_name(function)
        kind = function.child_by_field_name("type")
        if name not in wrappers or kind is None or not is_32bit_declaration(function):
            continue
        body = function.text
        returned = next((b for b in sorted(BALLOTS, key=len, reverse=True) if b.encode() in body), name)
        yield Hit(
            kind.start_byte,
            kind.end_byte,
            {"func": returned, "problem": f"returned by `{name}` as 32-bit `{text_of(kind)}`"},
        )


def _combined_32bit(unit: CudaUnit, call: Any) -> str | None:
    """The 32-bit operand a ballot is `&`/`|`/`^`-combined with, if any."""
    node = outermost(call, _VALUE_WRAPPERS)
    parent = node.parent
    if parent is None or parent.type != "binary_expression":
        return None
    if text_of(parent.child_by_field_name("operator")) not in ("&", "|", "^"):
        return None
    left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    other = unwrap(right if left == node else left)
    if other is None:
        return None
    if other.type == "call_expression":
        return text_of(other) if _returns_32bit(unit, callee_name(other)) else None
    if other.type == "identifier":
        decl = unit.declarations_in_scope(call).get(text_of(other))
        if (
            decl is not None
            and decl[0].type in ("declaration", "parameter_declaration")
            and (is_32bit_declaration(decl[0]))
        ):
            return text_of(other)
    return None


def ballot_value(unit: CudaUnit, node: Any) -> str | None:
    """The ballot function whose result `node` is: the call itself, or a
    variable initialised with it."""
    node = unwrap(node)
    if node is None:
        return None
    if _is_call_to(node, BALLOTS):
        return callee_name(node)
    if node.type == "identifier":
        decl = unit.declarations_in_scope(node).get(text_of(node))
        init = unwrap(decl[1]) if decl and decl[1] is not None else None
        if _is_call_to(init, BALLOTS):
            return callee_name(init)
    return None


def _masked_ballot(unit: CudaUnit, node: Any) -> str | None:
    """The ballot in `ballot & mask` (or `|`, `^`) whatever the mask is, a
    helper declared in another file included: counting the result with a
    32-bit counter drops the upper half of a wave64 ballot either way. None
    when the combination is reported already (`_combined_32bit`)."""
    node = unwrap(node)
    if node is None or node.type != "binary_expression":
        return None
    if text_of(node.child_by_field_name("operator")) not in ("&", "|", "^"):
        return None
    for side in ("left", "right"):
        operand = unwrap(node.child_by_field_name(side))
        if _is_call_to(operand, BALLOTS):
            return None if _combined_32bit(unit, operand) else callee_name(operand)
        found = _masked_ballot(unit, operand)
        if found:
            return found
    return None


def _compared_with_full_32(call: Any) -> str | None:
    """The 32-bit full mask a ballot is compared with (`== ~0u`), if any."""
    node = outermost(call)
    parent = node.parent
    if parent is None or parent.type != "binary_expression":
        return None
    if text_of(parent.child_by_field_name("operator")) not in ("==", "!="):
        return None
    left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    return is_full_mask_32(right if left == node else left)


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    for name, call in unit.calls(BALLOTS):
        mask = _compared_with_full_32(call)
        if mask:
            yield Hit(
                call.start_byte,
                call.end_byte,
                {"func": name, "problem": f"compared with the 32-bit mask `{mask}`"},
            )
    for name, call, target in narrow_stores(unit, ballot_producers(unit)):
        yield Hit(
            call.start_byte,
            call.end_byte,
            {"func": name, "problem": f"stored in 32-bit `{target}`", "var": target},
        )
    yield from _narrow_returns(unit)
    for name, call in unit.calls(BALLOTS):
        other = _combined_32bit(unit, call)
        if other:
            yield Hit(
                call.start_byte,
                call.end_byte,
                {"func": name, "problem": f"combined with 32-bit `{other}`"},
            )
    for counter, call in unit.calls(frozenset(BIT_COUNTS_32)):
        args = call_args(call)
        if len(args) != 1:
            continue
        source = ballot_value(unit, args[0]) or _masked_ballot(unit, args[0])
        if source:
            function = call.child_by_field_name("function")
            yield Hit(
                function.start_byte,
                function.end_byte,
                {"func": source, "problem": f"counted with `{counter}` (32 bits)"},
                replacement=BIT_COUNTS_32[counter] if counter in SAFE_WIDENING else None,
            )
