"""PG309: a module constant that sets the warp width to 32 in a numba.cuda
kernel file that uses warp intrinsics (`cuda.shfl_down_sync`, `cuda.syncwarp`,
`cuda.ballot_sync`, ...): a symbolic warp constant, reported where defined, as
PG508 does for CUDA C."""

from __future__ import annotations

import ast
import re

from portagpu.lint.model import Fix, Rule
from portagpu.lint.python import guards
from portagpu.lint.python.checkers.common import const_int
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker

_MEMO = "numba_warp_file"


def _warp_kernel_file(ctx: Context, rule: Rule) -> bool:
    """Does the module import numba's CUDA target and call its warp intrinsics?"""
    if _MEMO not in ctx.memo:
        text = ctx.source.text
        intrinsics = "|".join(re.escape(name) for name in rule.options.get("intrinsics", ()))
        ctx.memo[_MEMO] = bool(
            "numba" in text
            and any(
                q == "numba.cuda" or q.startswith("numba.cuda.") for q in ctx.imports.names.values()
            )
            and re.search(rf"\bcuda\.(?:{intrinsics})\b", text)
        )
    return ctx.memo[_MEMO]


@checker("numba_warp_constant", ast.Assign, ast.AnnAssign)
def numba_warp_constant(node: ast.AST, ctx: Context, rule: Rule) -> None:
    if ctx.parent() is not None and not isinstance(ctx.parent(), (ast.Module, ast.If)):
        return  # a module constant (possibly under an if), not a local
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name) or const_int(node.value) != 32:
        return
    from portagpu.cuda.warp.warp_size_constant import DEFAULT_NAMES

    name = targets[0].id
    if not re.fullmatch(rf"_*(?:{'|'.join(DEFAULT_NAMES)})", name, re.IGNORECASE):
        return
    if not _warp_kernel_file(ctx, rule):
        return
    # numba/cuda/... is numba's CUDA target, which AMD's numba-hip runs as
    # numba.cuda: the path says nothing here; a vendor test around it does
    if "rocm" in ctx.cover - guards.path_cover(ctx.path):
        return
    ctx.report(rule, node, Fix("suggestion", rule.replacement), respect_guards=False, name=name)
