"""PG507: __shared__ arrays with one slot per warp, sized `blockDim.x / 32`,
`BLOCK / 32` or `BLOCK >> 5`: on a 64-wide wavefront the count is wrong."""

from __future__ import annotations

from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, int_value, unwrap
from portagpu.cuda.warp.common import Options

DIVISORS = {"/": 32, ">>": 5}


def find(unit: CudaUnit, options: Options) -> Iterator[Hit]:
    for decl in unit.nodes("declaration"):
        if not any(c.type == "type_qualifier" and text_of(c) == "__shared__" for c in decl.children):
            continue
        stack = list(decl.children_by_field_name("declarator"))
        while stack:
            node = stack.pop()
            if node.type == "array_declarator":
                size = unwrap(node.child_by_field_name("size"))
                if size is not None and size.type == "binary_expression":
                    op = text_of(size.child_by_field_name("operator"))
                    parsed = int_value(size.child_by_field_name("right"))
                    if op in DIVISORS and parsed and parsed[0] == DIVISORS[op]:
                        yield Hit(size.start_byte, size.end_byte,
                                  {"size": " ".join(text_of(size).split())})
            stack.extend(node.named_children)
