"""Kernel launches in host code and the values their grid and block are built
from. Shared by the linter (PG510) and hipify's choice of a kernel's warp
model (hipify_bridge/warp_model.py), so both read a launch the same way."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, call_args, callee_name

LAUNCH_APIS = frozenset({"cudaLaunchKernel", "cudaLaunchCooperativeKernel"})


def launch_of(call: Any) -> tuple[str, list[Any]] | None:
    """(kernel name, [grid, block]) of a call that launches a kernel:
    `k<<<grid, block, ...>>>(...)` or `cudaLaunchKernel((void*)k, grid, block, ...)`;
    None for any other call."""
    config = next((c for c in call.named_children if c.type == "kernel_call_syntax"), None)
    if config is not None:
        return callee_name(call), config.named_children[:2]
    if callee_name(call) not in LAUNCH_APIS:
        return None
    args = call_args(call)
    if not args:
        return None
    name = re.sub(r"^\(.*?\)|[&()\s]", "", text_of(args[0]).split(",")[0])
    return re.sub(r"<.*", "", name), args[1:3]


def declared_value(unit: CudaUnit, name: str, at: Any) -> Any:
    """The value the declaration of `name` in scope at node `at` (of `unit`)
    gives it: `= expr`'s expression, or a constructor's argument or
    initializer list (`dim3 block(32, n)`, `dim3 block{32, n}`); None when
    it has none."""
    found = unit.declarations_in_scope(at).get(name)
    if found is None or found[0].type != "declaration":
        return None
    for child in found[0].children_by_field_name("declarator"):
        if child.type == "init_declarator" and text_of(child.child_by_field_name("declarator")) == name:
            return child.child_by_field_name("value")
    return None


@dataclass(frozen=True)
class Launch:
    kernel: str  # the launched kernel's name
    shapes: list[Any]  # [grid, block] expressions
    scope: Any  # the node (of the source unit) where the names in the shapes are declared


def launches(unit: CudaUnit) -> Iterator[Launch]:
    """Every kernel launch of a source: its own, and those in the bodies of
    its function-like macros once per invocation, read where the macro is
    used (`#define LAUNCH(k) k<<<grid, block>>>(x)` then `LAUNCH(rows);` in a
    host function that declares `grid` and `block`; a kernel named by a macro
    parameter is the invocation's argument)."""
    for call in unit.nodes("call_expression"):
        found = launch_of(call)
        if found is not None:
            yield Launch(found[0], found[1], call)
    bodies = unit.macro_unit
    if bodies is None:
        return
    for call in bodies.nodes("call_expression"):
        found = launch_of(call)
        if found is None:
            continue
        name, shapes = found
        macro, parameters = _macro_of(unit, call.start_byte)
        if not macro:
            continue
        for invocation in unit.nodes("call_expression"):
            if callee_name(invocation) != macro:
                continue
            kernel = name
            if name in parameters:
                args = call_args(invocation)
                at = parameters.index(name)
                kernel = text_of(args[at]) if at < len(args) else ""
            yield Launch(kernel, shapes, invocation)


def _macro_of(unit: CudaUnit, at: int) -> tuple[str, list[str]]:
    """The name and parameters of the function-like macro whose body holds
    byte `at` (the body need not parse as a function: `k<<<g, b>>>(y)` often
    ends without its `;`)."""
    for node in unit.nodes("preproc_function_def"):
        name, body = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is not None and body is not None and body.start_byte <= at < body.end_byte:
            parameters = node.child_by_field_name("parameters")
            return text_of(name), [text_of(p) for p in parameters.named_children] if parameters is not None else []
    return "", []
