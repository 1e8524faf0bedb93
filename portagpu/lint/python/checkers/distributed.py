"""PG112: torch.distributed initialised with a hard-coded NCCL backend."""

from __future__ import annotations

import ast

from portagpu.lint.model import Fix, Rule
from portagpu.lint.python.checkers.common import const_str
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker


def _backend_arg(node: ast.Call, keyword: str) -> ast.AST | None:
    for kw in node.keywords:
        if kw.arg == keyword:
            return kw.value
    if keyword == "backend" and node.args:
        return node.args[0]  # init_process_group(backend, ...) / new_group(ranks, ...) differ
    return None


@checker("nccl_backend", ast.Call)
def nccl_backend(node: ast.Call, ctx: Context, rule: Rule) -> None:
    keyword = rule.options.get("functions", {}).get(ctx.qualify(node.func) or "")
    if keyword is None:
        return
    value = _backend_arg(node, keyword)
    if keyword == "backend" and node.args and value is node.args[0]:
        if (ctx.qualify(node.func) or "").endswith("new_group"):
            return  # new_group's first positional argument is the ranks
    if isinstance(value, ast.Name):
        value = ctx.assigned_value(value) or value  # backend = "nccl" ... backend=backend
    if "nccl" in (const_str(value) or "").lower().split(":")[-1:]:
        ctx.report(rule, value, Fix("suggestion", rule.replacement))
