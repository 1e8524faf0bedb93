"""PG2xx: GPU telemetry through NVIDIA-only tools with no AMD path."""

from __future__ import annotations

import ast
import re

from portagpu.lint.model import Edit, Fix, Rule
from portagpu.lint.python.checkers.common import const_str, module_matches
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
    modules = rule.options.get("modules", [])
    for name in _imported_modules(node):
        found = module_matches(name, modules)
        if found:
            if not _has_amd_path(ctx, rule):
                ctx.report(rule, node, Fix("suggestion", rule.replacement), module=found)
            return


def _command_head(arg: ast.AST | None) -> str | None:
    """First word of a command given as a string or a list/tuple of strings."""
    text = const_str(arg)
    if text is None and isinstance(arg, (ast.List, ast.Tuple)) and arg.elts:
        text = const_str(arg.elts[0])
    if text is None and isinstance(arg, ast.JoinedStr) and arg.values:
        text = const_str(arg.values[0])
    if not text:
        return None
    head = text.strip().split(None, 1)
    return head[0] if head else None


@checker("nvidia_smi_subprocess", ast.Call)
def nvidia_smi_subprocess(node: ast.Call, ctx: Context, rule: Rule) -> None:
    qual = ctx.qualify(node.func)
    if qual not in rule.options.get("process_functions", ()):
        return
    arg = (
        node.args[0]
        if node.args
        else next((k.value for k in node.keywords if k.arg == "args"), None)
    )
    head = _command_head(arg)
    if head is None or head.rsplit("/", 1)[-1] not in rule.options.get("commands", ()):
        return
    if ctx.catches("OSError", "FileNotFoundError"):
        return  # a missing nvidia-smi is already handled
    if not _has_amd_path(ctx, rule):
        ctx.report(rule, node, Fix("suggestion", rule.replacement), command=head)


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
