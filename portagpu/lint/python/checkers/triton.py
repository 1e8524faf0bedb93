"""PG4xx: Triton idioms that assume 32-thread NVIDIA warps or PTX."""

from __future__ import annotations

import ast
import math

from portagpu.lint.model import Fix, Rule
from portagpu.lint.python import guards
from portagpu.lint.python.checkers.common import const_int, const_str, last_name
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


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


def is_warp_count(name: str | None) -> bool:
    """`num_warps`, `NUM_WARPS`, `nwarps`, `n_warps`, `warp_count` (not `warp_size`)."""
    lower = (name or "").lower()
    if "warp" not in lower or "size" in lower:
        return False
    return (
        "warps" in lower
        or lower.startswith(("nwarp", "n_warp", "num_warp"))
        or "warp_count" in lower
    )


def _results(ctx: Context, expr: ast.AST | None):
    """Integer constants `expr` can evaluate to (through conditionals and
    min/max caps: `min(max(n, 8), 32)` reaches 32), except
    those behind a vendor test (`32 if not is_hip() else 16`)."""
    if const_int(expr) is not None:
        yield expr
    elif isinstance(expr, ast.IfExp):
        if "rocm" in guards.test_cover(expr.test, ctx.qualify, ctx.guard_names):
            return
        if not guards.other_vendor_test(expr.test, ctx.qualify):  # `32 if dev == "xpu" else 8`
            yield from _results(ctx, expr.body)
        yield from _results(ctx, expr.orelse)
    elif isinstance(expr, ast.BoolOp):
        for value in expr.values:
            yield from _results(ctx, value)
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and not expr.keywords:
        if expr.func.id == "max":  # max(x, 8): at least each of its values
            for value in expr.args:
                yield from _results(ctx, value)
        elif expr.func.id == "min":  # min(max(x, 8), 32): reaches its smallest cap
            caps = [a for a in expr.args if const_int(a) is not None]
            if caps:
                yield min(caps, key=const_int)


def _report_over(ctx: Context, rule: Rule, expr: ast.AST | None, limit: int) -> None:
    for const in _results(ctx, expr):
        if const.value > limit:  # type: ignore[attr-defined]
            ctx.report(rule, const, Fix("suggestion", rule.replacement), value=const.value)  # type: ignore[attr-defined]


def _assigned_warps(node: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """(target, value) pairs of `num_warps = ...`, `num_warps: int = ...` and
    parameter defaults `def launch(num_warps=32)`."""
    if isinstance(node, ast.Assign):
        return [(t, node.value) for t in node.targets if is_warp_count(last_name(t))]
    if isinstance(node, ast.AnnAssign):
        return [(node.target, node.value)] if is_warp_count(last_name(node.target)) else []
    if isinstance(node, ast.arguments):
        positional = [*node.posonlyargs, *node.args]
        pairs = list(
            zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True)
        )
        pairs += [
            (a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True) if d is not None
        ]
        return [(a, d) for a, d in pairs if is_warp_count(a.arg)]
    return []


def _config_comprehension(ctx: Context, rule: Rule) -> bool:
    """`[triton.Config(..., num_warps=w) for w in ...]`: an autotune space (PG405)."""
    outer = ctx.parent(1)
    return isinstance(outer, (ast.ListComp, ast.GeneratorExp)) and _is_config(ctx, outer.elt, rule)


def _helper_warp_arguments(ctx: Context, call: ast.Call) -> list[ast.AST]:
    """Arguments given to a warp-count parameter of a function defined in this
    module (`def launch_arg(block_m, block_n, n, num_warps): ...` called as
    `launch_arg(None, 4096, M, 32)`)."""
    if not isinstance(call.func, ast.Name):
        return []
    helpers = ctx.memo.get("module_functions")
    if helpers is None:
        helpers = ctx.memo["module_functions"] = {
            n.name: n
            for n in ctx.tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
    helper = helpers.get(call.func.id)
    if helper is None:
        return []
    params = [*helper.args.posonlyargs, *helper.args.args]
    out = [
        a
        for p, a in zip(params, call.args, strict=False)
        if is_warp_count(p.arg) and not isinstance(a, ast.Starred)
    ]
    names = {p.arg for p in [*params, *helper.args.kwonlyargs] if is_warp_count(p.arg)}
    return out + [kw.value for kw in call.keywords if kw.arg in names]


@checker(
    "triton_num_warps",
    ast.keyword, ast.For, ast.comprehension, ast.Dict, ast.Assign, ast.AnnAssign, ast.arguments,
    ast.Call,
)  # fmt: skip
def triton_num_warps(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """num_warps above the limit: > 1,024 threads per block at wave64 (AMD CDNA),
    given directly, through a conditional, through a variable that is then
    passed (`num_warps = 32` ... `kernel[grid](..., num_warps=num_warps)`), or
    to a helper's warp-count parameter (`launch_arg(None, 4096, M, 32)`)."""
    limit = rule.options.get("max_num_warps", 16)
    if isinstance(node, ast.Call):
        for value in _helper_warp_arguments(ctx, node):
            if not isinstance(value, ast.keyword):
                _report_over(ctx, rule, value, limit)
        return
    if isinstance(node, ast.keyword):
        if node.arg != "num_warps" or _in_config_list(ctx, rule):
            return
        _report_over(ctx, rule, node.value, limit)
        return
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.arguments)):
        for _, value in _assigned_warps(node):
            _report_over(ctx, rule, value, limit)
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
    if isinstance(node, ast.comprehension) and _config_comprehension(ctx, rule):
        return  # the autotuner drops configs that cannot launch: PG405 judges the space
    for element in iterable.elts:
        value = const_int(element)
        if value is not None and value > limit:
            ctx.report(rule, element, Fix("suggestion", rule.replacement), value=value)


def _warp_aliases(ctx: Context) -> frozenset[str]:
    """Names passed as `num_warps=<name>` in the enclosing function: `w` in
    `for w in (4, 8): ... Config(..., num_warps=w)` counts warps too."""
    scope = next((s for s in reversed(ctx.stack) if isinstance(s, _FUNCTIONS)), ctx.tree)
    memo = ctx.memo.setdefault("warp_aliases", {})
    if id(scope) not in memo:
        memo[id(scope)] = frozenset(
            kw.value.id
            for kw in ast.walk(scope)
            if isinstance(kw, ast.keyword)
            and kw.arg == "num_warps"
            and isinstance(kw.value, ast.Name)
        )
    return memo[id(scope)]


def _counts_warps(ctx: Context, node: ast.AST) -> bool:
    name = last_name(node)
    return is_warp_count(name) or (isinstance(node, ast.Name) and node.id in _warp_aliases(ctx))


def _warps_from_threads(node: ast.BinOp, ctx: Context) -> bool:
    """`num_warps = BLOCK // 32` / `num_warps=threads // 32`: a warp taken as 32 threads."""
    if not isinstance(node.op, (ast.FloorDiv, ast.Div)) or const_int(node.right) != 32:
        return False
    if any("warp" in (last_name(n) or "").lower() for n in ast.walk(node.left)):
        return False  # `num_warps * warp // 32` already counts in the device's warps
    parent = ctx.parent()
    if isinstance(parent, ast.keyword):
        return parent.arg == "num_warps"
    return any(is_warp_count(last_name(t)) for t, _ in _assigned_warps(parent)) if parent else False


@checker("warp_size_literal", ast.BinOp)
def warp_size_literal(node: ast.BinOp, ctx: Context, rule: Rule) -> None:
    """`num_warps * 32` (and `32 * w` for a warp count `w`, `num_warps = n // 32`):
    a thread count that is wrong where a warp has 64 lanes."""
    if _warps_from_threads(node, ctx):
        ctx.report(rule, node, Fix("suggestion", rule.replacement), expr=ctx.text_of(node))
        return
    if not isinstance(node.op, ast.Mult):
        return
    for warps, size in ((node.left, node.right), (node.right, node.left)):
        if const_int(size) == 32 and _counts_warps(ctx, warps):
            ctx.report(rule, node, Fix("suggestion", rule.replacement), expr=ctx.text_of(node))
            return


@checker("qualified_call", ast.Call)
def qualified_call(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """A call to any function listed in options.functions (alias-resolved)."""
    qual = ctx.qualify(node.func)
    if qual is not None and qual in rule.options.get("functions", ()):
        ctx.report(rule, node, Fix("suggestion", rule.replacement), call=qual)


def _comprehension_warps(ctx: Context, node: ast.ListComp | ast.GeneratorExp, rule: Rule):
    """num_warps values of `[triton.Config(..., num_warps=w) for w in (...)]`;
    None when unknown or filtered (`if w * warp_size <= 1024`)."""
    elt = node.elt
    if not _is_config(ctx, elt, rule):
        return None
    warps = next((kw.value for kw in elt.keywords if kw.arg == "num_warps"), None)  # type: ignore[attr-defined]
    if warps is None:
        return None
    if const_int(warps) is not None:
        return [const_int(warps)]
    for gen in node.generators:
        if (
            isinstance(gen.target, ast.Name)
            and isinstance(warps, ast.Name)
            and gen.target.id == warps.id
        ):
            if gen.ifs or not isinstance(gen.iter, (ast.List, ast.Tuple, ast.Set)):
                return None
            values = [const_int(e) for e in gen.iter.elts]
            return None if None in values else values
    return None


@checker("autotune_space", ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)
def autotune_space(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """A list (or comprehension) of triton.Config in which no config can launch at wave64."""
    limit = rule.options.get("max_num_warps", 16)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        warps = _comprehension_warps(ctx, node, rule)
        if warps and all(w > limit for w in warps):
            ctx.report(
                rule,
                node,
                Fix("suggestion", rule.replacement),
                smallest=min(warps),
                count=len(warps),
            )
        return
    configs = node.elts
    if not configs or not all(_is_config(ctx, c, rule) for c in configs):
        return
    warps = [_warps(c) for c in configs]
    if all(w is not None and w > limit for w in warps):
        ctx.report(
            rule, node, Fix("suggestion", rule.replacement), smallest=min(warps), count=len(warps)
        )


def _threads_per_warp(call: ast.Call) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == "threads_per_warp":
            return kw.value
    return call.args[1] if len(call.args) > 1 else None


@checker("gluon_warp_layout", ast.Call)
def gluon_warp_layout(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """A Gluon layout whose threads_per_warp multiply to 32, all literals."""
    lanes = _threads_per_warp(node)
    if not isinstance(lanes, (ast.List, ast.Tuple)) or not lanes.elts:
        return
    counts = [const_int(e) for e in lanes.elts]
    if None in counts or math.prod(counts) != 32:  # type: ignore[arg-type]
        return
    if ctx.qualify(node.func) not in rule.options.get("layouts", ()):
        return
    ctx.report(rule, lanes, Fix("suggestion", rule.replacement), value=ctx.text_of(lanes))
