"""PG506: cooperative-groups tiles of 32 threads used as "the warp".

In a file tree-sitter could not parse cleanly (macro-declared kernels,
`CUCO_KERNEL __launch_bounds__(N) void f(...)`), its error recovery can read
a later `tiled_partition<32>(block)` as comparisons: there the text is read
too (comments aside)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, int_value
from portagpu.lint.cuda.registry import checker
from portagpu.lint.model import Rule

TILE_TEMPLATES = frozenset({"tiled_partition", "thread_block_tile"})
# the same tiles as text, for stretches tree-sitter could not parse
_TILE_TEXT = re.compile(rb"\b(tiled_partition|thread_block_tile)\s*<\s*32\s*>")


@checker("tiled_partition")
def tiled_partition(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    found = set()
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
            found.add(node.start_byte)
            yield Hit(node.start_byte, node.end_byte, {"template": text_of(name)})
    if not unit.root.has_error:
        return
    comments = [(c.start_byte, c.end_byte) for c in unit.nodes("comment")]
    lines = {unit.index.position(start)[0] for start in found}  # one finding a line is enough
    for m in _TILE_TEXT.finditer(unit.index.data):
        line = unit.index.position(m.start())[0]
        if line not in lines and not any(a <= m.start() < b for a, b in comments):
            lines.add(line)
            yield Hit(m.start(), m.end(), {"template": m.group(1).decode()})

