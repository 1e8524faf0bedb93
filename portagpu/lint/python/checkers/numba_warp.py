"""PG309 (and PG312 below): a module constant that sets the warp width to 32 in a numba.cuda
kernel file that uses warp intrinsics (`cuda.shfl_down_sync`, `cuda.syncwarp`,
`cuda.ballot_sync`, ...): a symbolic warp constant, reported where defined, as
PG508 does for CUDA C.

Checked once per file, from its import of numba's CUDA target: the constant's
own line names no numba, and module constants are never narrowed away."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from portagpu.lint.model import Fix, Rule
from portagpu.lint.python import guards
from portagpu.lint.python.checkers.common import const_int, imported_modules
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker

_DONE = "numba_warp_checked"


def _module_constants(body: list[ast.stmt], ctx: Context) -> Iterator[ast.Assign | ast.AnnAssign]:
    """Top-level assignments, also in top-level `if`s that are no vendor test."""
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            yield stmt
        elif isinstance(stmt, ast.If):
            if "rocm" not in guards.test_cover(stmt.test, ctx.qualify, ctx.guard_names):
                yield from _module_constants(stmt.body + stmt.orelse, ctx)


@checker("numba_warp_constant", ast.Import, ast.ImportFrom)
def numba_warp_constant(node: ast.AST, ctx: Context, rule: Rule) -> None:
    if _DONE in ctx.memo or not any(
        m == "numba.cuda" or m.startswith("numba.cuda.") for m in imported_modules(node)
    ):
        return
    ctx.memo[_DONE] = True
    intrinsics = "|".join(re.escape(name) for name in rule.options.get("intrinsics", ()))
    if not re.search(rf"\bcuda\.(?:{intrinsics})\b", ctx.module_text):
        return
    from portagpu.cuda.warp.warp_size_constant import DEFAULT_NAMES

    pattern = re.compile(rf"_*(?:{'|'.join(DEFAULT_NAMES)})", re.IGNORECASE)
    for stmt in _module_constants(ctx.tree.body, ctx):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        if const_int(stmt.value) == 32 and pattern.fullmatch(targets[0].id):
            # numba/cuda/... is numba's CUDA target, which AMD's numba-hip runs
            # as numba.cuda: the file's path is no guard here
            ctx.report(
                rule,
                stmt,
                Fix("suggestion", rule.replacement),
                respect_guards=False,
                name=targets[0].id,
            )


@checker("numba_lane_mask", ast.Call)
def numba_lane_mask(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """PG312: `cuda.shfl_down_sync(0xFFFFFFFF, v, o)`, `cuda.syncwarp(0xffffffff)`:
    numba.cuda's warp functions given a mask of 32 lanes."""
    qual = ctx.qualify(node.func)
    if qual is None or not qual.startswith("numba.cuda.") or qual[len("numba.cuda.") :] not in rule.options.get(
        "functions", ()
    ):
        return
    if node.args and const_int(node.args[0]) == 0xFFFFFFFF:
        ctx.report(rule, node.args[0], Fix("suggestion", rule.replacement), call=qual.rsplit(".", 1)[1])
