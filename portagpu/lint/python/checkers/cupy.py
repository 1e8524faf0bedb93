"""PG3xx: CuPy vendor libraries, cooperative launches, numba.cuda, PyCUDA."""

from __future__ import annotations

import ast

from portagpu.lint.model import Fix, Rule
from portagpu.lint.python.checkers.common import const_str, imported_modules, module_matches
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker


@checker("vendor_module", ast.Import, ast.ImportFrom, ast.Attribute, ast.Call)
def vendor_module(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """Imports of, or attribute paths into, modules listed in options.modules;
    an import by name (`importlib.import_module("pycuda.driver")`,
    `mod.lazy_import("cuda.bindings.driver")`) is an import.

    An attribute chain is reported once, where it first names the module
    (`cupy.cuda.cudnn` in `cupy.cuda.cudnn.foo()`); names imported from the
    module are reported at their import only.
    """
    modules = rule.options.get("modules", {})
    # the cheap, selective tests first: this runs on every attribute
    if isinstance(node, ast.Attribute):
        if rule.options.get("imports_only"):
            return  # the import is what breaks; its uses add nothing (PG311)
        qual = ctx.qualify(node)
        if qual is None or qual not in modules or _type_test(ctx):
            return
        found = qual
    else:
        found = None
        for name in imported_modules(node):
            found = module_matches(name, modules)
            if found:
                break
        if found is None:
            return
    if ctx.catches("ImportError", "ModuleNotFoundError"):
        return  # an optional import probed under try/except ImportError
    if _imports_any(ctx, rule.options.get("dispatch_with", ())):
        return  # the module imports the other vendor's side too: it dispatches
    note = modules[found] if isinstance(modules, dict) else ""
    ctx.report(rule, node, Fix("suggestion", rule.replacement), module=found, note=note or "")


def _type_test(ctx: Context) -> bool:
    """Whether the attribute chain being checked is the class side of an
    `isinstance`/`issubclass` test: a dispatch on the object's kind, not a
    use of the vendor's API (its import, if any, is judged on its own)."""
    depth, child = 1, ctx.parent(0)
    parent = ctx.parent(depth)
    while isinstance(parent, (ast.Attribute, ast.Tuple)):
        depth, child = depth + 1, parent
        parent = ctx.parent(depth)
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("isinstance", "issubclass")
        and len(parent.args) == 2
        and parent.args[1] is child
    )


def _imports_any(ctx: Context, modules) -> bool:
    """Does the file import one of `modules` (or a module inside one)?"""
    return bool(modules) and any(
        module_matches(name, modules) for node in ctx.imports.nodes for name in imported_modules(node)
    )


def _flag_options(node: ast.AST, flags) -> str | None:
    values = []
    if isinstance(node, (ast.Tuple, ast.List)):
        values = [const_str(e) for e in node.elts]
    else:
        values = [const_str(node)]
    for value in values:
        if value and any(value.startswith(f) for f in flags):
            return value
    return None


@checker("cupy_relocatable", ast.Call)
def cupy_relocatable(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """RawKernel/RawModule with cooperative groups or -rdc: CuPy refuses both on HIP."""
    if ctx.qualify(node.func) not in rule.options.get("constructors", ()):
        return
    for kw in node.keywords:
        if kw.arg == "enable_cooperative_groups" and not (
            isinstance(kw.value, ast.Constant) and not kw.value.value
        ):
            ctx.report(
                rule, kw, Fix("suggestion", rule.replacement), option="enable_cooperative_groups"
            )
        elif kw.arg == "options":
            value = kw.value
            if isinstance(value, ast.Name):  # OPTIONS = ("-rdc=true",) ... options=OPTIONS
                value = ctx.assigned_value(value) or value
            flag = _flag_options(value, rule.options.get("flags", ()))
            if flag:
                ctx.report(rule, kw, Fix("suggestion", rule.replacement), option=flag)


def _provider_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Tuple) and node.elts:  # ("CUDAExecutionProvider", {...options})
        node = node.elts[0]
    name = const_str(node)
    return name if name and name.endswith("ExecutionProvider") else None


@checker("onnxruntime_providers", ast.List, ast.Tuple)
def onnxruntime_providers(node: ast.List | ast.Tuple, ctx: Context, rule: Rule) -> None:
    """A provider list naming NVIDIA execution providers and no AMD one."""
    names = [_provider_name(e) for e in node.elts]
    if not names or None in names:
        return  # not (only) a list of provider names
    nvidia = [n for n in names if n in rule.options.get("nvidia", ())]
    if nvidia and not any(n in rule.options.get("amd", ()) for n in names):
        shown = ", ".join(names)  # type: ignore[arg-type]
        ctx.report(rule, node, Fix("suggestion", rule.replacement), providers=f"[{shown}]")
