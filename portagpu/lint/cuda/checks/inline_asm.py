"""PG601: inline PTX (`asm`, `asm volatile`, `__asm__`): NVIDIA-only assembly
that hipcc rejects ("invalid instruction") and hipify leaves in place."""

from __future__ import annotations

from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.lint.cuda.registry import checker
from portagpu.lint.model import Rule


@checker("inline_asm")
def inline_asm(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    for node in unit.nodes("gnu_asm_expression"):
        code = node.child_by_field_name("assembly_code")
        snippet = " ".join(text_of(code).strip('"').split())[:40] if code is not None else ""
        yield Hit(node.start_byte, node.end_byte, {"asm": snippet})
