"""Kernel launches in host code and the values their grid and block are built
from. Shared by the linter (PG510) and hipify's choice of a kernel's warp
model (hipify_bridge/warp_model.py), so both read a launch the same way."""

from __future__ import annotations

import re
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
