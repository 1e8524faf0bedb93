"""Small helpers shared by checkers."""

from __future__ import annotations

import ast

from portagpu.lint.python.context import Context


def const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def const_int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def torch_base(ctx: Context, node: ast.AST) -> str | None:
    """Local spelling of the `torch` module at the root of an attribute chain."""
    while isinstance(node, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Name) and ctx.imports.names.get(node.id) == "torch":
        return node.id
    return None


def open_paren_after(ctx: Context, func: ast.AST) -> tuple[int, int] | None:
    """1-based (line, char col) just past the `(` that follows `func`, same line only."""
    _, _, line, col = ctx.span(func)
    text = ctx.source.line(line)
    rest = text[col - 1 :]
    stripped = rest.lstrip(" \t")
    if not stripped.startswith("("):
        return None
    return line, col + (len(rest) - len(stripped)) + 1


def module_matches(name: str, modules) -> str | None:
    """The entry of `modules` that `name` is or lies under."""
    for module in modules:
        if name == module or name.startswith(module + "."):
            return module
    return None


# calls that import a module named by a string: importlib.import_module("x"),
# __import__("x"), and lazy importers (polygraphy's mod.lazy_import("x"))
_IMPORTING_CALLS = frozenset({"import_module", "__import__", "lazy_import"})


def imported_modules(node: ast.AST) -> list[str]:
    """The modules an import statement names (`from a import b`: a and a.b),
    or the one an importing call names by a literal string."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level or not node.module:
            return []
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Call) and last_name(node.func) in _IMPORTING_CALLS and node.args:
        name = const_str(node.args[0])
        return [name] if name and not name.startswith(".") else []
    return []
