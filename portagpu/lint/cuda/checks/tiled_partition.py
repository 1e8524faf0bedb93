"""PG506: cooperative-groups tiles of 32 threads used as "the warp"."""

from __future__ import annotations

from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, int_value
from portagpu.lint.cuda.registry import checker
from portagpu.lint.model import Rule

TILE_TEMPLATES = frozenset({"tiled_partition", "thread_block_tile"})


@checker("tiled_partition")
def tiled_partition(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    for node in unit.nodes("template_function", "template_type"):
        name = node.child_by_field_name("name")
        args = node.child_by_field_name("arguments")
        if name is None or args is None or text_of(name) not in TILE_TEMPLATES:
            continue
        first = args.named_children[0] if args.named_children else None
        if first is not None and first.type == "type_descriptor" and first.named_children:
            first = first.named_children[0]
        parsed = int_value(first) if first is not None else None
        if parsed and parsed[0] == 32:
            yield Hit(node.start_byte, node.end_byte, {"template": text_of(name)})

