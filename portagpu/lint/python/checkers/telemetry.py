"""PG2xx: GPU telemetry through NVIDIA-only tools with no AMD path."""

from __future__ import annotations

import ast
import re

from portagpu.lint import vendor_names, vendor_paths
from portagpu.lint.model import Edit, Fix, Rule
from portagpu.lint.python import guards
from portagpu.lint.python.checkers.common import (
    const_str,
    imported_modules,
    last_name,
    module_matches,
)
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker


def _has_amd_path(ctx: Context, rule: Rule) -> bool:
    """The module already handles AMD somewhere (amdsmi, amd-smi, rocm-smi...)."""
    return ctx.text_mentions(*rule.options.get("amd_markers", ()))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@checker("nvidia_only_import", ast.Import, ast.ImportFrom, ast.Call)
def nvidia_only_import(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """Import of an NVIDIA-only telemetry module in a file with no AMD path
    (also by name: `importlib.import_module("pynvml")`)."""
    names = imported_modules(node)
    if not names:
        return  # most calls import nothing
    if vendor_paths.path_cover(ctx.path) >= guards.EVERY:
        return  # the module is the NVIDIA backend itself (gpustat/nvml.py, backends/nvidia/)
    modules = rule.options.get("modules", [])
    if isinstance(node, ast.ImportFrom):
        names += [alias.name for alias in node.names]  # `from pkg.nvml import pynvml as N`
    parts = set(re.split(r"[\\/]", ctx.path)[:-1])
    for name in names:
        found = module_matches(name, modules)
        if found and found.split(".")[0] in parts and name.split(".")[0] == found.split(".")[0]:
            continue  # the tool's own package importing itself (gpustat/core.py: `from gpustat import util`)
        if found:
            if not _has_amd_path(ctx, rule):
                ctx.report(rule, node, Fix("suggestion", rule.replacement), module=found)
            return


# calls that return where a command lives: the command they look up runs
_PATH_LOOKUPS = frozenset(("shutil.which", "distutils.spawn.find_executable"))


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
    if isinstance(arg, ast.Call) and ctx.qualify(arg.func) in _PATH_LOOKUPS and arg.args:
        return _command_heads(ctx, arg.args[0], depth + 1)  # shutil.which("nvidia-smi"): its path
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name):
        return _helper_commands(ctx, arg.func.id)  # [_nvidia_smi(), "--query-gpu=..."]
    text = const_str(arg)
    if text is None and isinstance(arg, ast.BinOp):  # "%s\\nvidia-smi.exe" % drive
        text = const_str(arg.left)
    words = (text or "").strip().split(None, 1)
    return words[:1]


def _helper_commands(ctx: Context, name: str) -> list[str]:
    """Commands a module-level helper returns (`def _nvidia_smi(): ... return "nvidia-smi"`):
    the first word of every string constant in it."""
    helper = next(
        (n for n in ctx.tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None
    )
    if helper is None:
        return []
    texts = (const_str(n) or const_str(getattr(n, "left", None)) for n in ast.walk(helper))
    return [t.strip().split(None, 1)[0] for t in texts if t and t.strip()]


def _command_name(head: str) -> str:
    name = head.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name[:-4] if name.endswith(".exe") else name


@checker("nvidia_smi_subprocess", ast.Call)
def nvidia_smi_subprocess(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """nvidia-smi run through subprocess/os, also through a variable. Handling
    its failure (`except FileNotFoundError: return []`) is not an AMD path:
    AMD GPUs still go unseen."""
    qual = ctx.qualify(node.func)
    wrapper = False
    tool = rule.options.get("tool_functions", {}).get(qual)
    if tool is not None:  # a library call that runs the tool itself (triton.testing.nvsmi)
        if not _amd_path_around(ctx, rule):
            ctx.report(rule, node, Fix("suggestion", rule.replacement), command=tool)
        return
    if qual not in rule.options.get("process_functions", ()):
        # a project's own runner (run_cmd("nvidia-smi -L"), self.execute([...])): the
        # command must then be spelled out at the call
        words = set(vendor_names.name_words(last_name(node.func) or ""))
        if not words & set(rule.options.get("runner_words", ())):
            return
        wrapper = True
    arg = (
        node.args[0]
        if node.args
        else next((k.value for k in node.keywords if k.arg == "args"), None)
    )
    commands = rule.options.get("commands", ())
    heads = _command_heads(ctx, arg) if not wrapper or not isinstance(arg, ast.Name) else []
    head = next((h for h in heads if _command_name(h) in commands), None)
    if head is not None and not _amd_path_around(ctx, rule):
        ctx.report(rule, node, Fix("suggestion", rule.replacement), command=_command_name(head))


def _amd_path_around(ctx: Context, rule: Rule) -> bool:
    """An AMD path on the way to this call: in its outermost function or class
    (the AMD CPU-affinity code elsewhere in the module does not count), or in
    the module when the call is at top level."""
    outer = next((n for n in ctx.stack if isinstance(n, _SCOPES)), None)
    if outer is None:
        return _has_amd_path(ctx, rule)
    text = ctx.text_of(outer)
    return any(marker in text for marker in rule.options.get("amd_markers", ()))


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
    for name in imported_modules(node):
        found = module_matches(name, rule.options.get("legacy_modules", ()))
        if found:
            ctx.report(
                rule, node, Fix("suggestion", rule.replacement), respect_guards=False, module=found
            )
            return
