"""PG501-PG505, PG507-PG509: the warp constructs hipify rewrites, found by
portagpu/cuda/warp/ and registered here under their rules' `checker:` names."""

from __future__ import annotations

from collections.abc import Iterable

from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.cuda.warp import FINDERS, Finder
from portagpu.lint.cuda.registry import CheckerFn, checker
from portagpu.lint.model import Rule


def _with_rule_options(find: Finder) -> CheckerFn:
    def check(unit: CudaUnit, rule: Rule) -> Iterable[Hit]:
        return find(unit, rule.options)

    return check


for _name, _find in FINDERS.items():
    checker(_name)(_with_rule_options(_find))
