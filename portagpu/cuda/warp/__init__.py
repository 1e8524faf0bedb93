"""Finders of the 32-lane assumptions that have a mechanical HIP rewrite.

Each module has `find(unit, options) -> Iterator[Hit]` over a parsed CudaUnit.
They sit in the syntax layer because two faces share them: lint reports
their hits as PG5xx findings (portagpu/lint/cuda/checks/warp.py registers
them under the rules' `checker:` names) and `hipify_bridge.translate` rewrites
them (hipify_bridge/warp_fixes.py), so the linter and the translator agree
without the translator loading the rule catalogue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.cuda.warp import (
    activemask_width,
    ballot_width,
    lane_arithmetic,
    lane_mask,
    shared_warp_array,
    shuffle_loop,
    warp_size_constant,
    warpsize_constexpr,
)
from portagpu.cuda.warp.common import Options

Finder = Callable[[CudaUnit, Options], Iterator[Hit]]

# `checker:` name -> finder, in the order of their rule ids (PG501, PG502, ...):
# translate takes overlapping rewrites first come, as lint lists them
FINDERS: dict[str, Finder] = {
    "lane_mask": lane_mask.find,
    "activemask_width": activemask_width.find,
    "ballot_width": ballot_width.find,
    "lane_arithmetic": lane_arithmetic.find,
    "shuffle_loop": shuffle_loop.find,
    "shared_warp_array": shared_warp_array.find,
    "warp_size_constant": warp_size_constant.find,
    "warpsize_constexpr": warpsize_constexpr.find,
}
