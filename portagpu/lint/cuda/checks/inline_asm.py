"""PG601: inline PTX (`asm`, `asm volatile`, `__asm__`): NVIDIA-only assembly
that hipcc rejects ("invalid instruction") and hipify leaves in place.

Host assembly in the same file is not PTX: a header that holds device code
may also hold x86 or Arm code for the CPU (`__asm__("bsrl %1, %0" ...)` behind
`__GNUC__ && __x86_64__`), and `asm volatile("" ::: "memory")` is a compiler
barrier hipcc accepts. An `asm` counts as PTX when its template has a typed,
dotted instruction (`mov.u32`, `shfl.sync.bfly.b32`, `bar.sync`), a PTX
directive or special register (`.reg`, `%laneid`), or starts with one of
PTX's undotted instructions (`trap;`, `exit;`) or a brace of a PTX scope."""

from __future__ import annotations

import re
from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.lint.cuda.registry import checker
from portagpu.lint.model import Rule

_PTX = re.compile(
    r"\b[a-z]+[0-9]*\.[A-Za-z]"  # typed or qualified instruction: mov.u32, bar.sync, max.NaN.f32
    r"|\.(?:reg|pred|shared|global|local|param)\b"  # directives and state spaces
    r"|%%?(?:laneid|warpid|nwarpid|smid|nsmid|gridid|clock|clock64|globaltimer|lanemask_\w+|tid|ntid|ctaid|nctaid)\b"
)
# PTX's undotted instructions, or a brace opening or closing a PTX scope that
# other `asm` statements continue (`asm volatile("}\n")`)
_PTX_BARE = re.compile(r"^\s*(?:[{}]|(?:trap|exit|ret|brkpt|pmevent)\b)")


def is_ptx(template: str) -> bool:
    return bool(_PTX.search(template) or _PTX_BARE.match(template))


@checker("inline_asm")
def inline_asm(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    for node in unit.nodes("gnu_asm_expression"):
        code = node.child_by_field_name("assembly_code")
        # every string literal of the statement: a template split by macros
        # (`"{ .reg .pred p;" PRED "}"`) leaves only its last piece in the field
        strings = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', text_of(node)))
        if not is_ptx(strings):
            continue
        template = text_of(code) if code is not None else ""
        snippet = " ".join(template.strip('"').split())[:40]
        yield Hit(node.start_byte, node.end_byte, {"asm": snippet})
