"""PG508: a warp-width constant defined as 32 (#define WARP_SIZE 32,
constexpr int kWarpSize = 32, enum, template default; a parameter of any name
defaulting to 32 that is passed on as a shuffle's width), also when the 32 is
spelled as a constant expression (`#define WARP_SIZE (1 << LOG2_WARP)`), or
capped at it (`constexpr int kWarpSize = std::min(kNThreads, 32)`), and a
constant of any name set to 32 whose half starts a shuffle loop
(`constexpr int cols = 32; for (step = cols / 2; ...) __shfl_down_sync(...)`).
Reported at the definition only: fixing it there fixes every use."""

from __future__ import annotations

import re
from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import (
    CudaUnit,
    Hit,
    call_args,
    const_value,
    declared_names,
    eval_constant_text,
    function_name,
    sole_return,
    strip_comments,
)
from portagpu.cuda.warp.common import Options
from portagpu.cuda.warp.macro_roles import SHUFFLE_LIKE, WIDTH, parameter_passed_as
from portagpu.cuda.warp.shuffle_loop import halved_width_loops

DEFAULT_NAMES = (
    # a project's prefix before the name is common: WP_TILE_WARP_SIZE, LIB_WARP_SIZE
    r"(\w+_)?(k_?)?(cuda_?)?(warp|wave(front)?)_?(size|width|sz|len|lanes|threads)",
    r"(k_?)?(num_?)?(threads|lanes)_?(per|in)_?(warp|wave(front)?)",
    r"(k_?)?(warp|wave)_?(thread|lane)_?(count|num)",
)


# the warp width as its log2, 5 (`LOG_WARP_SIZE = 5`, `kWarpShift`, `WARP_BITS`)
LOG_NAMES = re.compile(
    r"^(?:\w+_)?(?:k_?)?(?:log2?_?(?:warp|wave(?:front)?)(?:_?(?:size|width|lanes|sz))?"
    r"|(?:warp|wave(?:front)?)_?(?:size_?)?(?:shift|log2?|bits))$",
    re.IGNORECASE,
)


def _name_pattern(options: Options) -> re.Pattern[str]:
    names = tuple(options.get("names", ())) or DEFAULT_NAMES
    return re.compile(r"^(?:" + "|".join(names) + r")$", re.IGNORECASE)


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    pattern = _name_pattern(options)
    for node in unit.nodes("preproc_def"):
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None or value is None:
            continue
        wanted = 5 if LOG_NAMES.match(text_of(name)) else 32 if pattern.match(text_of(name)) else None
        if wanted is None or eval_constant_text(strip_comments(text_of(value)), unit.macro_value) != wanted:
            continue
        at = value.text.find(str(wanted).encode())
        # `#define WARP_SIZE 32`, without a trailing comment; else the whole value
        end = value.start_byte + at + len(str(wanted)) if at >= 0 else value.start_byte + len(value.text.rstrip())
        yield Hit(node.start_byte, end, {"name": text_of(name)})
    for decl in unit.nodes("declaration", "field_declaration"):
        for name, init in declared_names(decl):
            if init is None:
                continue
            if (pattern.match(name) and (_constant(unit, init) == 32 or _capped_at_32(init))) or (
                LOG_NAMES.match(name) and _constant(unit, init) == 5
            ):
                yield Hit(decl.start_byte, decl.end_byte, {"name": name})
    yield from _halved_widths(unit, pattern)
    yield from _width_functions(unit, pattern)
    for node in unit.nodes("enumerator", "optional_parameter_declaration"):
        name = node.child_by_field_name("name") or node.child_by_field_name("declarator")
        value = node.child_by_field_name("value") or node.child_by_field_name("default_value")
        if name is None or value is None:
            continue
        if node.type == "enumerator" and LOG_NAMES.match(text_of(name)) and _constant(unit, value) == 5:
            yield Hit(node.start_byte, node.end_byte, {"name": text_of(name)})
            continue
        # an enumerator's value may name its siblings (`1 << LOG_WARP`); a parameter's
        # default naming a constant (`int width = kWarpSize`) is that constant's use
        value_32 = _constant(unit, value) if node.type == "enumerator" else const_value(value)
        if value_32 != 32:
            continue
        if pattern.match(text_of(name)) or (
            node.type == "optional_parameter_declaration"
            and (parameter_passed_as(unit, node, text_of(name), WIDTH) or _shuffle_width(node, text_of(name)))
        ):
            yield Hit(node.start_byte, node.end_byte, {"name": text_of(name)})


def _constant(unit: CudaUnit, value) -> int | None:
    """A constant expression's value, names included: the file's macros, the
    enumerators of the same enum and constants in scope
    (`enum { LOG_WARP = 5, WARP = 1 << LOG_WARP }`)."""
    found = const_value(value)
    if found is not None or value.type in ("number_literal", "call_expression"):
        return found
    enumerators = {}
    if value.parent is not None and value.parent.type == "enumerator" and value.parent.parent is not None:
        for item in value.parent.parent.named_children:
            name, val = item.child_by_field_name("name"), item.child_by_field_name("value")
            if name is not None and val is not None:
                enumerators[text_of(name)] = text_of(val)
    declarations = None

    def lookup(name: str) -> str | None:
        nonlocal declarations
        if name in enumerators:
            return enumerators[name]
        if name in unit.macros:
            return unit.macro_value(name)
        if declarations is None:
            declarations = unit.declarations_in_scope(value)
        decl = declarations.get(name)
        return text_of(decl[1]) if decl is not None and decl[1] is not None else None

    return eval_constant_text(text_of(value), lookup)


def _shuffle_width(parameter, name: str) -> bool:
    """`T shuffle_down(T v, int offset, int width = 32)`: the width parameter of
    a function named like a shuffle, also one that emulates it through shared
    memory (what a pre-Kepler fallback branch compiles to under hipcc)."""
    if name not in ("width", "w", "warp_width", "lanes"):
        return False
    function = parameter.parent
    while function is not None and function.type != "function_definition":
        function = function.parent
    return function is not None and bool(SHUFFLE_LIKE.search(function_name(function)))


def _width_functions(unit: CudaUnit, pattern: re.Pattern[str]) -> Iterator[Hit]:
    """`constexpr int warp_size() { return 32; }`: a warp width written as a
    function whose body only returns 32, reported at its 32."""
    for function in unit.nodes("function_definition"):
        name = function_name(function)
        if not name or not pattern.match(name):
            continue
        value = sole_return(function)
        if value is not None and const_value(value) == 32:
            yield Hit(value.start_byte, value.end_byte, {"name": f"{name}()"})


def _halved_widths(unit: CudaUnit, pattern: re.Pattern[str]) -> Iterator[Hit]:
    """Constants of other names set to 32 whose half starts a shuffle loop."""
    seen: set[int] = set()
    for loop, name in halved_width_loops(unit):
        decl, init = unit.declarations_in_scope(loop).get(name, (None, None))
        if (
            decl is None
            or decl.type != "declaration"
            or pattern.match(name)  # reported above as a warp-width name
            or decl.start_byte in seen
            or const_value(init) != 32
        ):
            continue
        seen.add(decl.start_byte)
        yield Hit(decl.start_byte, decl.end_byte, {"name": name})


_MIN = frozenset({"min", "std::min", "::min", "cuda::std::min"})


def _capped_at_32(init) -> bool:
    """`std::min(threads, 32)`: the width is 32 whenever the block is a warp or more."""
    if init.type != "call_expression":
        return False
    func = init.child_by_field_name("function")
    if func is None or text_of(func).split("<")[0].strip() not in _MIN:
        return False
    return any(const_value(arg) == 32 for arg in call_args(init))
