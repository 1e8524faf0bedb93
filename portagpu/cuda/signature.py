"""Kernel parameter lists, read with tree-sitter-cuda (the runtime converts
Python scalars to the C type each parameter takes)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from portagpu.errors import PortagpuError

# C scalar type (qualifiers removed, whitespace normalised) -> numpy dtype name.
# LP64 (Linux, the platforms CUDA and ROCm run on): long is 64-bit.
SCALAR_DTYPES: dict[str, str] = {
    "bool": "bool",
    "char": "int8",
    "signed char": "int8",
    "unsigned char": "uint8",
    "short": "int16",
    "short int": "int16",
    "signed short": "int16",
    "unsigned short": "uint16",
    "unsigned short int": "uint16",
    "int": "int32",
    "signed": "int32",
    "signed int": "int32",
    "unsigned": "uint32",
    "unsigned int": "uint32",
    "long": "int64",
    "long int": "int64",
    "signed long": "int64",
    "unsigned long": "uint64",
    "unsigned long int": "uint64",
    "long long": "int64",
    "long long int": "int64",
    "signed long long": "int64",
    "unsigned long long": "uint64",
    "unsigned long long int": "uint64",
    "int8_t": "int8",
    "uint8_t": "uint8",
    "int16_t": "int16",
    "uint16_t": "uint16",
    "int32_t": "int32",
    "uint32_t": "uint32",
    "int64_t": "int64",
    "uint64_t": "uint64",
    "size_t": "uint64",
    "ssize_t": "int64",
    "ptrdiff_t": "int64",
    "intptr_t": "int64",
    "uintptr_t": "uint64",
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "__half": "float16",
    "_Float16": "float16",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "int32": "int32",
    "int64": "int64",
}

QUALIFIERS = frozenset(
    {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "__grid_constant__"}
)


class KernelNotFoundError(PortagpuError, LookupError):
    """The CUDA source defines no function of the name asked for."""


@dataclass(frozen=True)
class Param:
    """One kernel parameter: `const float* __restrict__ x` -> name "x",
    ctype "const float* __restrict__", base_type "float", is_pointer True."""

    name: str
    ctype: str
    is_pointer: bool
    base_type: str  # ctype without qualifiers, pointers and references

    @property
    def is_reference(self) -> bool:
        return "&" in self.ctype

    @property
    def dtype(self) -> str | None:
        """numpy dtype name a scalar parameter takes ("float32" for float);
        None for pointers and for types numpy has no name for (structs, templates)."""
        if self.is_pointer:
            return None
        return scalar_dtype(self.base_type)


def scalar_dtype(ctype: str) -> str | None:
    """numpy dtype name for a C scalar type, ignoring qualifiers; None if unknown."""
    words = [w for w in ctype.replace("*", " ").replace("&", " ").split() if w not in QUALIFIERS]
    key = " ".join(words)
    if key.startswith("std::"):
        key = key[5:]
    return SCALAR_DTYPES.get(key)


def _declarator_name(node):
    """Walk nested declarators down to the identifier; say if a pointer/array was met."""
    pointer = False
    while node is not None and node.type not in ("identifier", "field_identifier"):
        if node.type in ("pointer_declarator", "array_declarator", "abstract_pointer_declarator",
                         "abstract_array_declarator"):
            pointer = True
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type != "type_qualifier"), None)
        node = inner
    return node, pointer


def _param(node, position: int) -> Param:
    from portagpu.cuda.parser import text_of

    declarator = node.child_by_field_name("declarator")
    ident, pointer = _declarator_name(declarator) if declarator is not None else (None, False)
    raw = node.text
    if ident is not None:  # the type is the declaration with the name cut out
        start, end = ident.start_byte - node.start_byte, ident.end_byte - node.start_byte
        raw = raw[:start] + raw[end:]
    ctype = " ".join(raw.decode("utf-8", "replace").split())
    ctype = re.sub(r"\s*\[[^\]]*\]", "*", ctype)  # double d[] decays to double*
    ctype = re.sub(r"\s+([*&])", r"\1", ctype).strip()
    base_parts = []
    for child in node.children:
        if child == declarator:
            break
        if child.type != "type_qualifier":
            base_parts.append(text_of(child))
    base_type = " ".join(" ".join(base_parts).split())
    name = ident.text.decode() if ident is not None else f"arg{position}"
    return Param(name, ctype, pointer, base_type)


def _function_name(declarator) -> str:
    node = declarator.child_by_field_name("declarator")
    while node is not None and node.type not in ("identifier", "field_identifier"):
        if node.type in ("qualified_identifier",):
            node = node.child_by_field_name("name")
            continue
        if node.type == "template_function":
            node = node.child_by_field_name("name")
            continue
        inner = node.child_by_field_name("declarator") or (
            node.named_children[-1] if node.named_children else None
        )
        node = inner
    return node.text.decode() if node is not None else ""


def _find_function(root, name: str):
    """Prefer a __global__ definition; fall back to any function or prototype."""
    from portagpu.cuda.parser import walk

    fallback = None
    for node in walk(root):
        if node.type != "function_declarator":
            continue
        if _function_name(node) != name:
            continue
        holder = node.parent
        while holder is not None and holder.type in (
            "pointer_declarator", "reference_declarator", "parenthesized_declarator",
        ):
            holder = holder.parent
        is_global = holder is not None and any(c.type == "__global__" for c in holder.children)
        if is_global:
            return node
        if fallback is None:
            fallback = node
    return fallback


def kernel_signature(source: str, name: str) -> list[Param]:
    """Parameters of kernel `name` in CUDA `source`, in order.

    `name` may carry template arguments or a namespace ("ns::k<float>"); they
    are ignored. Raises KernelNotFoundError when no such function is defined.
    """
    from portagpu.cuda.parser import parse

    bare = name.split("<", 1)[0].strip().rsplit("::", 1)[-1]
    tree = parse(source)
    declarator = _find_function(tree.root_node, bare)
    if declarator is None:
        raise KernelNotFoundError(f"kernel {bare!r} is not defined in the CUDA source")
    params_node = declarator.child_by_field_name("parameters")
    params: list[Param] = []
    for child in params_node.named_children if params_node is not None else ():
        if child.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        param = _param(child, len(params))
        if param.ctype == "void" and not param.is_pointer and child.child_by_field_name(
            "declarator"
        ) is None:
            continue  # k(void)
        params.append(param)
    return params
