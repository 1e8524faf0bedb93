"""PG4xx: Triton idioms that assume 32-thread NVIDIA warps or PTX."""

from __future__ import annotations

import ast

from portagpu.lint.model import Fix, Rule
from portagpu.lint.python.checkers.common import const_int, const_str, last_name
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker


def _is_config(ctx: Context, node: ast.AST, rule: Rule) -> bool:
    return isinstance(node, ast.Call) and ctx.qualify(node.func) in rule.options.get(
        "config_classes", ("triton.Config",)
    )


def _warps(call: ast.Call) -> int | None:
    for kw in call.keywords:
        if kw.arg == "num_warps":
            return const_int(kw.value)
    return None


def _in_config_list(ctx: Context, rule: Rule) -> bool:
    """keyword -> Config call -> list: the autotune-space rule judges those lists."""
    call, container = ctx.parent(1), ctx.parent(2)
    return _is_config(ctx, call, rule) and isinstance(container, (ast.List, ast.Tuple))


@checker("triton_num_warps", ast.keyword, ast.For, ast.comprehension, ast.Dict)
def triton_num_warps(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """num_warps above the limit: > 1,024 threads per block at wave64 (AMD CDNA)."""
    limit = rule.options.get("max_num_warps", 16)
    if isinstance(node, ast.keyword):
        value = const_int(node.value)
        if node.arg != "num_warps" or value is None or value <= limit:
            return
        if _in_config_list(ctx, rule):
            return
        ctx.report(rule, node, Fix("suggestion", rule.replacement), value=value)
        return
    if isinstance(node, ast.Dict):  # {"num_warps": 32, ...} launch/meta dicts
        for key, value in zip(node.keys, node.values, strict=True):
            warps = const_int(value)
            if key is not None and const_str(key) == "num_warps" and warps and warps > limit:
                ctx.report(rule, value, Fix("suggestion", rule.replacement), value=warps)
        return
    # for num_warps in [4, 8, 32]: / (... for num_warps in (8, 32))
    target, iterable = node.target, node.iter
    if last_name(target) != "num_warps" or not isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
        return
    for element in iterable.elts:
        value = const_int(element)
        if value is not None and value > limit:
            ctx.report(rule, element, Fix("suggestion", rule.replacement), value=value)


@checker("warp_size_literal", ast.BinOp)
def warp_size_literal(node: ast.BinOp, ctx: Context, rule: Rule) -> None:
    """`num_warps * 32`: a thread count that is wrong where a warp has 64 lanes."""
    if not isinstance(node.op, ast.Mult):
        return
    names = rule.options.get("warp_count_names", ("num_warps",))
    for warps, size in ((node.left, node.right), (node.right, node.left)):
        if const_int(size) == 32 and last_name(warps) in names:
            ctx.report(rule, node, Fix("suggestion", rule.replacement), expr=ctx.text_of(node))
            return


@checker("qualified_call", ast.Call)
def qualified_call(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """A call to any function listed in options.functions (alias-resolved)."""
    qual = ctx.qualify(node.func)
    if qual is not None and qual in rule.options.get("functions", ()):
        ctx.report(rule, node, Fix("suggestion", rule.replacement), call=qual)


@checker("autotune_space", ast.List, ast.Tuple)
def autotune_space(node: ast.List | ast.Tuple, ctx: Context, rule: Rule) -> None:
    """A list of triton.Config in which no config can launch at wave64."""
    limit = rule.options.get("max_num_warps", 16)
    configs = node.elts
    if not configs or not all(_is_config(ctx, c, rule) for c in configs):
        return
    warps = [_warps(c) for c in configs]
    if all(w is not None and w > limit for w in warps):
        ctx.report(
            rule, node, Fix("suggestion", rule.replacement), smallest=min(warps), count=len(warps)
        )
