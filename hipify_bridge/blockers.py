"""CUDA constructs HIP cannot compile as written: found with their lines,
reported with the reason and the HIP replacement, and shimmed where HIP has
an equivalent (the table is hip_blockers.yaml, package data)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from portagpu.hipify_bridge.warp_fixes import ByteEdit

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, call_args, callee_name

TABLE = "hip_blockers.yaml"
_HALF = re.compile(r"\b(?:__)?half2?\b")
_NOT_CODE = frozenset(
    {"comment", "string_literal", "raw_string_literal", "char_literal", "system_lib_string"}
)


@dataclass(frozen=True)
class Blocker:
    id: str
    kind: str  # include | call | member | identifier
    names: tuple[str, ...]
    reason: str
    replacement: str
    shim: dict[str, Any]
    once: bool

    def matches(self, name: str) -> bool:
        return any(name == n or (n.endswith("/") and name.startswith(n)) for n in self.names)


@lru_cache(maxsize=1)
def table() -> tuple[Blocker, ...]:
    import yaml
    from portagpu.hipify_bridge.translation import package_text

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(
        Blocker(
            b["id"],
            b["kind"],
            tuple(b["names"]),
            b["reason"],
            b["replacement"],
            dict(b.get("shim") or {}),
            b.get("report", "each") == "once",
        )
        for b in yaml.load(package_text(TABLE), Loader=loader)["blockers"]
    )


@dataclass
class BlockerScan:
    edits: list[ByteEdit]
    items: list[dict[str, Any]]  # the report: line, col, id, construct, reason, replacement, shim
    defines: list[str]  # macros the compat header needs defined (PORTAGPU_CG_SHIMS, ...)


def _new_name(blocker: Blocker, name: str) -> str | None:
    by_name = blocker.shim.get("rename_to_by_name")
    if by_name:
        return by_name.get(name)
    return blocker.shim.get("rename_to")


def _in_code(unit: CudaUnit, start: int) -> bool:
    node = unit.root.descendant_for_byte_range(start, start + 1)
    while node is not None:
        if node.type in _NOT_CODE:
            return False
        node = node.parent
    return True


def _occurrences(unit: CudaUnit, blocker: Blocker) -> list[tuple[int, int, str, ByteEdit | None]]:
    """(start, end, construct, shim edit or None) of each use."""
    out = []
    if blocker.kind == "include":
        for node in unit.nodes("preproc_include"):
            path = node.child_by_field_name("path")
            header = text_of(path).strip('<>"') if path is not None else ""
            if not blocker.matches(header):
                continue
            end = node.end_byte - (1 if node.text.endswith(b"\n") else 0)
            edit = None
            if blocker.shim.get("drop_include"):
                edit = ByteEdit(
                    node.start_byte,
                    end,
                    f"// portagpu hipify: <{header}> is provided by portagpu_hip_compat.h",
                )
            elif blocker.shim.get("guard_include"):
                edit = ByteEdit(
                    node.start_byte,
                    end,
                    f"#if __has_include(<{header}>)\n{text_of(node).strip()}\n#endif",
                )
            out.append((node.start_byte, end, f"#include <{header}>", edit))
    elif blocker.kind == "call":
        for call in unit.nodes("call_expression"):
            name = callee_name(call)
            function = call.child_by_field_name("function")
            if not blocker.matches(name) or function is None or function.type == "field_expression":
                continue
            new = _new_name(blocker, name)
            target = function if function.type == "identifier" else None
            edit = (
                ByteEdit(target.start_byte, target.end_byte, new)
                if (new is not None and target is not None)
                else None
            )
            out.append((call.start_byte, call.end_byte, name, edit))
    elif blocker.kind == "member":
        for call in unit.nodes("call_expression"):
            function = call.child_by_field_name("function")
            if function is None or function.type != "field_expression":
                continue
            field = function.child_by_field_name("field")
            obj = function.child_by_field_name("argument")
            if field is None or obj is None or not blocker.matches(text_of(field)):
                continue
            edit = None
            arglist = call.child_by_field_name("arguments")
            if (
                blocker.shim.get("member_to_free")
                and arglist is not None
                and text_of(function)[len(text_of(obj)) :].lstrip().startswith(".")
            ):
                # obj.name(args) -> portagpu_name(obj, args): two edits around obj and args
                sep = ", " if call_args(call) else ""
                edit = (
                    ByteEdit(obj.start_byte, obj.start_byte, f"portagpu_{text_of(field)}("),
                    ByteEdit(obj.end_byte, arglist.start_byte + 1, sep),
                )
            out.append((call.start_byte, call.end_byte, f".{text_of(field)}()", edit))
    elif blocker.kind == "vector_compound_operator":
        out += _vector_operators(unit, blocker)
    elif blocker.kind == "half_atomic":
        # with half types in the file, every atomicAdd goes through the shim: its
        # template forwards other types to atomicAdd, so templates over T = half work too
        calls = unit.nodes("call_expression") if _HALF.search(unit.text) else []
        for call in calls:
            function = call.child_by_field_name("function")
            if (
                function is None
                or function.type != "identifier"
                or not blocker.matches(text_of(function))
            ):
                continue
            edit = ByteEdit(function.start_byte, function.end_byte, blocker.shim["rename_to"])
            out.append((call.start_byte, call.end_byte, text_of(function), edit))
    else:
        pattern = re.compile(
            rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in blocker.names) + rb")\b"
        )
        for match in pattern.finditer(unit.index.data):
            if not _in_code(unit, match.start()):
                continue
            name = match.group(0).decode()
            new = _new_name(blocker, name)
            edit = ByteEdit(match.start(), match.end(), new) if new is not None else None
            out.append((match.start(), match.end(), name, edit))
    return out


VECTOR_TYPE = re.compile(r"^(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$")


def _vector_operators(unit: CudaUnit, blocker: Blocker) -> list[tuple[int, int, str, Any]]:
    """`operator+=(float3&, float3)`-style definitions: HIP's vector types have them."""
    out = []
    for node in unit.nodes("function_definition"):
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        name = declarator.child_by_field_name("declarator") if declarator is not None else None
        if name is None or "".join(text_of(name).split()) not in blocker.names:
            continue
        params = declarator.child_by_field_name("parameters").named_children
        types = [
            text_of(p.child_by_field_name("type"))
            if p.child_by_field_name("type") is not None
            else ""
            for p in params
        ]
        if (
            len(types) != 2
            or not all(VECTOR_TYPE.match(t.strip()) for t in types)
            or (types[0].strip() != types[1].strip())
        ):
            continue
        start = node.start_byte
        template = (
            node.parent
            if node.parent is not None and node.parent.type == ("template_declaration")
            else None
        )
        if template is not None:
            start = template.start_byte
        line_start = unit.index.data.rfind(b"\n", 0, start) + 1
        if unit.index.data[line_start:start].strip():
            continue  # shares its line with other code: leave it to the report
        guard = "#if !(defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__))\n"
        edits = (
            ByteEdit(line_start, line_start, guard),
            ByteEdit(node.end_byte, node.end_byte, "\n#endif"),
        )
        out.append(
            (
                node.start_byte,
                node.end_byte,
                f"{''.join(text_of(name).split())}({types[0]}, {types[1]})",
                edits,
            )
        )
    return out


def scan(unit: CudaUnit) -> BlockerScan:
    result = BlockerScan([], [], [])
    for blocker in table():
        found = [o for o in _occurrences(unit, blocker) if not unit.is_guarded(o[0])]
        if not found:
            continue
        shimmed = [edit for *_, edit in found if edit is not None]
        for edit in shimmed:
            result.edits += list(edit) if isinstance(edit, tuple) else [edit]
        define = blocker.shim.get("define")
        if shimmed and define and define not in result.defines:
            result.defines.append(define)
        shown = found[:1] if blocker.once else found
        for start, _, construct, edit in shown:
            line, col = unit.index.position(start)
            item = {
                "line": line,
                "col": col,
                "id": blocker.id,
                "construct": construct,
                "reason": blocker.reason,
                "replacement": blocker.replacement,
                "shimmed": edit is not None,
            }
            if blocker.once and len(found) > 1:
                item["count"] = len(found)
            result.items.append(item)
    return result


def uses(unit_text: str) -> bool:
    """Cheap pre-check: could the text hold any blocker at all?"""
    return any(name.rstrip("/") in unit_text for b in table() for name in b.names)
