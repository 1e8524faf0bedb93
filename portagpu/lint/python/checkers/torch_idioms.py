"""PG109-PG112: torch idioms found in real training code that only work on
CUDA (typed tensor classes, "cuda"-or-"cpu" device types, a bf16 check that
picks float16 elsewhere, torch.version.cuda used as a string). Hard-coded NCCL and CUDA_VISIBLE_DEVICES are the
distributed family's (PG801, PG803)."""

from __future__ import annotations

import ast
import re

from portagpu.lint.model import Fix, Rule
from portagpu.lint.python.checkers.common import const_str
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker


@checker("torch_cuda_tensor_type", ast.Attribute, ast.Name)
def torch_cuda_tensor_type(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """torch.cuda.FloatTensor & co., called or passed as a type."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return
    qual = ctx.qualify(node)
    if qual is None or not qual.startswith("torch.cuda."):
        return
    dtype = rule.options.get("types", {}).get(qual[len("torch.cuda.") :])
    if dtype is None or isinstance(ctx.parent(), ast.Attribute):
        return  # a longer chain is reported where it ends
    if isinstance(ctx.parent(), (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return  # a table of tensor types (type checks, dispatch maps) uses none of them
    if _type_test(node, ctx.parent()):
        return  # `isinstance(t, torch.cuda.FloatTensor)` is False off CUDA: only building one raises
    replacement = f"dtype={dtype}, device=device"
    if isinstance(ctx.parent(), ast.Call) and ctx.parent().func is not node:  # type: ignore[union-attr]
        replacement = f"x.to(device, {dtype})"  # x.type(torch.cuda.HalfTensor)
    ctx.report(
        rule, node, Fix("suggestion", f"Use `{replacement}`"), name=qual, replacement=replacement
    )


def _type_test(node: ast.AST, parent: ast.AST | None) -> bool:
    """The class as the type a test compares with: isinstance/issubclass's
    second argument, or a side of `type(t) == ...` / `is`."""
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name):
        return parent.func.id in ("isinstance", "issubclass") and parent.args[1:2] == [node]
    return isinstance(parent, ast.Compare) and all(
        isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) for op in parent.ops
    )


def _cuda_in(test: ast.AST) -> ast.AST | None:
    """The device expression of `"cuda" in X` / `X.startswith("cuda")`."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.In)
        and const_str(test.left) == "cuda"
    ):
        return test.comparators[0]
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and test.args
        and const_str(test.args[0]) == "cuda"
    ):
        return test.func.value
    return None


@checker("device_type_from_string", ast.IfExp)
def device_type_from_string(node: ast.IfExp, ctx: Context, rule: Rule) -> None:
    """`"cuda" if "cuda" in device else "cpu"`: mps becomes cpu."""
    if const_str(node.body) != "cuda" or const_str(node.orelse) != "cpu":
        return
    device = _cuda_in(node.test)
    if device is None:
        return
    shown = f"torch.device({ctx.text_of(device)}).type"
    ctx.report(rule, node, Fix("suggestion", f"Use `{shown}`"), expr=ctx.text_of(node))


_FP16 = frozenset(
    ("float16", "fp16", "half", "torch.float16", "torch.half", "torch.HalfTensor", "torch.cuda.HalfTensor")
)
_BF16_CALL = "torch.cuda.is_bf16_supported"


def _bf16_call(ctx: Context, expr: ast.AST) -> ast.Call | None:
    for sub in ast.walk(expr):
        if isinstance(sub, ast.Call) and ctx.qualify(sub.func) == _BF16_CALL:
            return sub
    return None


def _is_fp16(ctx: Context, expr: ast.AST | None) -> bool:
    if expr is None:
        return False
    if const_str(expr) in _FP16:
        return True
    return (ctx.qualify(expr) or "") in _FP16


def _branch_value(body: list[ast.stmt]) -> ast.AST | None:
    """What a one-statement branch picks: `dtype = X`, or the one argument of
    a setter call (`torch.set_default_dtype(X)`, `set_default_tensor_type(X)`)."""
    if len(body) != 1:
        return None
    stmt = body[0]
    if isinstance(stmt, ast.Assign):
        return stmt.value
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords:
        return call.args[0]
    return None


def _off_cuda(ctx: Context, expr: ast.AST) -> bool | None:
    """The value of a test where there is no CUDA device, if it is certain:
    torch.cuda.* calls are False/0, `x == "cuda"` is False, `x != "cuda"` True."""
    if isinstance(expr, ast.BoolOp):
        values = [_off_cuda(ctx, v) for v in expr.values]
        stop = isinstance(expr.op, ast.Or)  # True ends an `or`, False an `and`
        if stop in values:
            return stop
        return None if None in values else not stop
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = _off_cuda(ctx, expr.operand)
        return None if inner is None else not inner
    if isinstance(expr, ast.Call) and (ctx.qualify(expr.func) or "").startswith("torch.cuda."):
        return False
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
        sides = (expr.left, expr.comparators[0])
        if any(const_str(side) == "cuda" for side in sides):
            op = expr.ops[0]
            if isinstance(op, (ast.Eq, ast.In, ast.Is)):
                return False
            if isinstance(op, (ast.NotEq, ast.NotIn, ast.IsNot)):
                return True
    return None


@checker("bf16_check_picks_fp16", ast.IfExp, ast.If, ast.keyword)
def bf16_check_picks_fp16(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """A dtype chosen by torch.cuda.is_bf16_supported() that comes out float16
    off CUDA. Checked at the choice, before its test is visited, so a
    `torch.cuda.is_available() and ...` in the same test is not taken as a guard."""
    if isinstance(node, ast.keyword):
        picks_fp16 = {
            "bf16": False,
            "dtype": False,
            "torch_dtype": False,
            "fp16": True,
            "half": True,
        }
        if node.arg not in picks_fp16:
            return
        call = _bf16_call(ctx, node.value)
        if call is None or _off_cuda(ctx, node.value) is not picks_fp16[node.arg]:
            return
    else:
        call = _bf16_call(ctx, node.test)
        if call is None or _off_cuda(ctx, node.test) is not False:
            return
        other = node.orelse if isinstance(node, ast.IfExp) else _branch_value(node.orelse)
        if not _is_fp16(ctx, other):
            return
    ctx.report(rule, call, Fix("suggestion", rule.replacement), call=_BF16_CALL)


def _none_checked_later(ctx: Context, name: str) -> bool:
    """`if cuda_version:` / `cuda_version is None` somewhere in the module."""
    pattern = re.compile(
        rf"\bif\s+(not\s+)?{re.escape(name)}\b|\b{re.escape(name)}\s+is\s+(not\s+)?None\b"
        rf"|\b{re.escape(name)}\s+(or|and)\b"
    )
    return pattern.search(ctx.module_text) is not None


def _used_as_string(node: ast.AST, parent: ast.AST | None) -> bool:
    """`x.split(".")`, `"cu" + x`, `TABLE[x]`, `Version(x)`: uses that need a str, not None."""
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return True
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _VERSION_PARSERS  # `parse(None)` raises TypeError
    return isinstance(parent, ast.Subscript) and parent.slice is node


_VERSION_PARSERS = frozenset({"parse", "Version", "LooseVersion", "StrictVersion", "parse_version"})


def _string_uses_of(scope: ast.AST, name: str) -> bool:
    for outer in ast.walk(scope):
        for child in ast.iter_child_nodes(outer):
            if isinstance(child, ast.Name) and child.id == name and _used_as_string(child, outer):
                return True
    return False


@checker("torch_version_cuda_value", ast.Attribute)
def torch_version_cuda_value(node: ast.Attribute, ctx: Context, rule: Rule) -> None:
    """torch.version.cuda used where a string is needed (`.split`, `"cu" + v`,
    a table key), directly or through a variable: it is None on ROCm and CPU
    builds. Shown, logged or stored, None does no harm."""
    if (
        not isinstance(node.ctx, ast.Load)
        or ctx.in_test
        or ctx.qualify(node) != "torch.version.cuda"
    ):
        return
    parent = ctx.parent()
    if not _used_as_string(node, parent):
        if not isinstance(parent, ast.Assign):
            return
        names = [t.id for t in parent.targets if isinstance(t, ast.Name)]
        scope = next(
            (
                n
                for n in reversed(ctx.stack)
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            ),
            ctx.tree,
        )
        if not names or any(_none_checked_later(ctx, n) for n in names):
            return
        if not any(_string_uses_of(scope, n) for n in names):
            return
    ctx.report(rule, node, Fix("suggestion", rule.replacement))
