"""Checker registry for CUDA rules: a rule's `checker:` key names a function
registered here, as portagpu/lint/python/registry.py does for Python rules.

A CUDA checker is `fn(unit, rule) -> Iterable[Hit]` over one parsed CudaUnit;
the hits become findings in analysis.py. Adding a rule is YAML plus, at most,
one small decorated function in checks/.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from portagpu.cuda.unit import CudaUnit, Hit
    from portagpu.lint.model import Rule

CheckerFn = Callable[["CudaUnit", "Rule"], "Iterable[Hit]"]

CHECKERS: dict[str, CheckerFn] = {}


def checker(name: str) -> Callable[[CheckerFn], CheckerFn]:
    """Register `fn` as CUDA checker `name`."""

    def register(fn: CheckerFn) -> CheckerFn:
        if name in CHECKERS and CHECKERS[name] is not fn:
            raise ValueError(f"CUDA checker {name!r} is registered twice")
        CHECKERS[name] = fn
        return fn

    return register


def get(name: str) -> CheckerFn | None:
    if not CHECKERS:
        load_builtin()
    return CHECKERS.get(name)


def load_builtin() -> None:
    from portagpu.lint.cuda import checks  # noqa: F401  (registers on import)
