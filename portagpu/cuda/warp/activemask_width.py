"""PG502: __activemask() kept in a 32-bit variable (HIP returns 64 lanes' bits)."""

from __future__ import annotations

from collections.abc import Iterator

from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.cuda.warp.ballot_width import narrow_stores
from portagpu.cuda.warp.common import Options


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    for name, call, target in narrow_stores(unit, frozenset({"__activemask"})):
        yield Hit(call.start_byte, call.end_byte, {"func": name, "var": target})
