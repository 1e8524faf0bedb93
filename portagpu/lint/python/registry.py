"""Checker registry: a rule's `checker:` key names a function registered here.

A checker is `fn(node, ctx, rule) -> None` and is called, during the one walk
over the module, for every node of the types it registered for; it reports
through `ctx.report(...)`. Adding a rule is YAML plus, at most, one small
function: no central if-chain.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from portagpu.lint.model import Rule
    from portagpu.lint.python.context import Context

CheckerFn = Callable[[ast.AST, "Context", "Rule"], None]


@dataclass(frozen=True)
class Checker:
    name: str
    nodes: tuple[type[ast.AST], ...]
    fn: CheckerFn


CHECKERS: dict[str, Checker] = {}


def checker(name: str, *nodes: type[ast.AST]) -> Callable[[CheckerFn], CheckerFn]:
    """Register `fn` as checker `name`, called on nodes of the given types."""

    def register(fn: CheckerFn) -> CheckerFn:
        if name in CHECKERS and CHECKERS[name].fn is not fn:
            raise ValueError(f"checker {name!r} is registered twice")
        CHECKERS[name] = Checker(name, tuple(nodes), fn)
        return fn

    return register


def get(name: str) -> Checker | None:
    if not CHECKERS:
        load_builtin()
    return CHECKERS.get(name)


def load_builtin() -> None:
    from portagpu.lint.python import checkers  # noqa: F401  (registers on import)
