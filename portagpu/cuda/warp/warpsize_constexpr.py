"""PG509: `warpSize` where C++ needs a compile-time constant (array bounds,
template arguments, constexpr, static_assert, case labels). Not constexpr in
CUDA, nor in HIP since ROCm 7. hipify writes PORTAGPU_WARP_SIZE there."""

from __future__ import annotations

from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit
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


def _declares_warp_size(parameters) -> bool:
    """A template's or function's parameter list names one `warpSize`."""
    for parameter in parameters.named_children if parameters is not None else ():
        inner = parameter.child_by_field_name("declarator") or parameter.child_by_field_name("name")
        while inner is not None and inner.type not in ("identifier", "type_identifier"):
            inner = inner.child_by_field_name("declarator")
        if inner is None:  # `template <int warpSize>`: the name is a bare child
            inner = next((c for c in parameter.named_children if c.type == "identifier"), None)
        if inner is not None and text_of(inner) == "warpSize":
            return True
    return False


def _shadowed(node) -> bool:
    """`warpSize` is a template or function parameter here
    (`template <int warpSize> struct Policy`), not the builtin."""
    parent = node.parent
    while parent is not None:
        if parent.type == "template_declaration":
            if _declares_warp_size(parent.child_by_field_name("parameters")):
                return True
        elif parent.type == "function_declarator":
            if _declares_warp_size(parent.child_by_field_name("parameters")):
                return True
        elif parent.type == "function_definition":
            declarator = parent.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            if declarator is not None and _declares_warp_size(declarator.child_by_field_name("parameters")):
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
