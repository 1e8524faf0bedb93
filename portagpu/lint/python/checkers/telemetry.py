"""PG2xx: GPU telemetry through NVIDIA-only tools with no AMD path."""

from __future__ import annotations

import ast
import re

from portagpu.lint.model import Edit, Fix, Rule
from portagpu.lint.python import guards
from portagpu.lint.python.checkers.common import const_str, last_name, module_matches
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker


def _has_amd_path(ctx: Context, rule: Rule) -> bool:
    """The module already handles AMD somewhere (amdsmi, amd-smi, rocm-smi...)."""
    return ctx.text_mentions(*rule.options.get("amd_markers", ()))


def _imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level or not node.module:
        return []
    return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]


@checker("nvidia_only_import", ast.Import, ast.ImportFrom)
def nvidia_only_import(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """Import of an NVIDIA-only telemetry module in a file with no AMD path."""
    if guards.path_cover(ctx.path) >= guards.EVERY:
        return  # the module is the NVIDIA backend itself (gpustat/nvml.py, backends/nvidia/)
    modules = rule.options.get("modules", [])
    for name in _imported_modules(node):
        found = module_matches(name, modules)
        if found:
            if not _has_amd_path(ctx, rule):
                ctx.report(rule, node, Fix("suggestion", rule.replacement), module=found)
            return


def _command_heads(ctx: Context, arg: ast.AST | None, depth: int = 0) -> list[str]:
    """Possible first words of a command given as a string, a list/tuple of
    strings, an f-string, `cmd.split()` / `shlex.split(cmd)`, or a variable
    holding one of these (every value assigned to it in its scope)."""
    if isinstance(arg, ast.Call) and (last_name(arg.func) or "") == "split":
        arg = arg.func.value if isinstance(arg.func, ast.Attribute) and not arg.args else (arg.args or [None])[0]
    if isinstance(arg, (ast.List, ast.Tuple)) and arg.elts:
        arg = arg.elts[0]
    if isinstance(arg, ast.JoinedStr) and arg.values:
        arg = arg.values[0]
    if isinstance(arg, ast.Name):
        if depth > 2:
            return []
        return [h for value in ctx.assigned_values(arg) for h in _command_heads(ctx, value, depth + 1)]
    text = const_str(arg)
    if text is None and isinstance(arg, ast.BinOp):  # "%s\\nvidia-smi.exe" % drive
        text = const_str(arg.left)
    words = (text or "").strip().split(None, 1)
    return words[:1]


def _command_name(head: str) -> str:
    name = head.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name[:-4] if name.endswith(".exe") else name


@checker("nvidia_smi_subprocess", ast.Call)
def nvidia_smi_subprocess(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """nvidia-smi run through subprocess/os, also through a variable. Handling
    its failure (`except FileNotFoundError: return []`) is not an AMD path:
    AMD GPUs still go unseen."""
    qual = ctx.qualify(node.func)
    if qual not in rule.options.get("process_functions", ()):
        return
    arg = (
        node.args[0]
        if node.args
        else next((k.value for k in node.keywords if k.arg == "args"), None)
    )
    commands = rule.options.get("commands", ())
    head = next((h for h in _command_heads(ctx, arg) if _command_name(h) in commands), None)
    if head is not None and not _has_amd_path(ctx, rule):
        ctx.report(rule, node, Fix("suggestion", rule.replacement), command=_command_name(head))


def _is_all(target: ast.AST) -> bool:
    return isinstance(target, ast.Name) and target.id == "__all__"


_REQUIREMENT = re.compile(r"^\s*pynvml\s*(?:$|[<>=!~;\[ ])")


@checker("deprecated_pynvml", ast.Import, ast.ImportFrom, ast.Constant)
def deprecated_pynvml(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """APIs only the deprecated `pynvml` package has, and `pynvml` as a requirement."""
    if isinstance(node, ast.Constant):
        value = node.value
        if not isinstance(value, str) or not _REQUIREMENT.match(value):
            return
        if not isinstance(ctx.parent(), (ast.List, ast.Tuple, ast.Set)):
            return  # a requirement list such as install_requires=[...]
        owner = ctx.parent(2)
        if isinstance(owner, ast.Assign) and any(_is_all(t) for t in owner.targets):
            return  # __all__ = ["pynvml", ...] names a module attribute
        fix = Fix("suggestion", "Depend on nvidia-ml-py (same `pynvml` import name)")
        if value.strip() == "pynvml":
            quote = ctx.text_of(node)[:1]
            line, col, end_line, end_col = ctx.span(node)
            if quote in "'\"" and ctx.text_of(node) == f"{quote}{value}{quote}":
                fix = Fix(
                    fix.applicability,
                    fix.message,
                    (Edit(line, col, end_line, end_col, f"{quote}nvidia-ml-py{quote}"),),
                )
        ctx.report(rule, node, fix, respect_guards=False, module=value.strip())
        return
    for name in _imported_modules(node):
        found = module_matches(name, rule.options.get("legacy_modules", ()))
        if found:
            ctx.report(
                rule, node, Fix("suggestion", rule.replacement), respect_guards=False, module=found
            )
            return
