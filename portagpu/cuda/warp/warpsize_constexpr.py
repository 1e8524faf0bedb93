"""PG509: `warpSize` where C++ needs a compile-time constant (array bounds,
template arguments, constexpr, static_assert, case labels). Not constexpr in
CUDA, nor in HIP since ROCm 7. hipify writes PORTAGPU_WARP_SIZE there."""

from __future__ import annotations

from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, function_declarator, parameter_names
from portagpu.cuda.warp.common import Options

CONSTANT_CONTEXTS = {
    "array_declarator": "an array bound",
    "template_argument_list": "a template argument",
    "static_assert_declaration": "a static_assert",
    "case_statement": "a case label",
    "enumerator": "an enumerator",
}


def _context(node) -> str | None:
    parent = node.parent
    while parent is not None:
        kind = parent.type
        if kind in CONSTANT_CONTEXTS:
            if kind == "array_declarator":
                size = parent.child_by_field_name("size")
                if size is None or not (size.start_byte <= node.start_byte < size.end_byte):
                    return None
            if kind == "case_statement":
                value = parent.child_by_field_name("value")
                if value is None or not (value.start_byte <= node.start_byte < value.end_byte):
                    return None
            return CONSTANT_CONTEXTS[kind]
        if kind in ("declaration", "field_declaration"):  # `static constexpr int W = warpSize;` too
            if any(
                text_of(c) == "constexpr"
                for c in parent.children
                if c.type in ("type_qualifier", "storage_class_specifier")
            ):
                return "a constexpr initialiser"
            return None
        if kind in ("compound_statement", "function_definition", "expression_statement"):
            return None
        parent = parent.parent
    return None


def _shadowed(node) -> bool:
    """`warpSize` is a template or function parameter here
    (`template <int warpSize> struct Policy`), not the builtin."""
    parent = node.parent
    while parent is not None:
        parameters = None
        if parent.type in ("template_declaration", "function_declarator"):
            parameters = parent.child_by_field_name("parameters")
        elif parent.type == "function_definition":
            declarator = function_declarator(parent)
            parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
        if parameters is not None and "warpSize" in parameter_names(parameters):
            return True
        parent = parent.parent
    return False


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    if "warpSize" not in unit.text or "warpSize" in unit.macros:
        return  # a project's own `#define warpSize 32` is PG508's
    for node in unit.nodes("identifier", "type_identifier"):
        if text_of(node) != "warpSize" or _shadowed(node):
            continue
        context = _context(node)
        if context:
            yield Hit(node.start_byte, node.end_byte, {"context": context})
