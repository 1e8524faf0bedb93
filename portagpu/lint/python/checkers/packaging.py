"""PG308 in setup.py: requirement strings that lock the package to NVIDIA.
requirements*.txt and pyproject.toml are read by portagpu/lint/deps.py with
the same patterns (the rule's `options.pins`)."""

from __future__ import annotations

import ast
import os

from portagpu.lint.deps import has_rocm_story, match_pin, pins_of
from portagpu.lint.model import Fix, Rule
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker

_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.keyword)


@checker("nvidia_pinned_dependency", ast.Constant)
def nvidia_pinned_dependency(node: ast.Constant, ctx: Context, rule: Rule) -> None:
    value = node.value
    if not isinstance(value, str) or not ctx.path.endswith("setup.py"):
        return
    if os.path.basename(ctx.path) != "setup.py":
        return
    if not isinstance(ctx.parent(), _CONTAINERS):
        return  # a requirement sits in a list, a dict of extras or a keyword
    hit = match_pin(value, pins_of(rule))
    if hit is None or has_rocm_story(ctx.module_text):
        return
    pin, _ = hit
    ctx.report(rule, node, Fix("suggestion", rule.replacement), what=pin.what, rocm=pin.rocm)
