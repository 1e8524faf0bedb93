"""PG501: a 32-bit full lane mask given to a *_sync warp function.

A literal is reported where it is passed; a variable or macro holding one is
reported once, at its definition (fixing it there fixes every use)."""

from __future__ import annotations

from collections.abc import Iterator

from portagpu.cuda.checks._common import MASK_SYNC_FUNCTIONS, is_full_mask_32, macro_is_full_mask_32
from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, call_args, unwrap
from portagpu.lint.model import Rule

REPLACEMENT = "~0ull"


def check(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    reported: set[int] = set()
    for name, call in unit.calls(MASK_SYNC_FUNCTIONS):
        args = call_args(call)
        if not args:
            continue
        mask = unwrap(args[0])
        literal = is_full_mask_32(mask)
        if literal:
            yield Hit(mask.start_byte, mask.end_byte, {"mask": literal, "func": name},
                      replacement=REPLACEMENT)
            continue
        if mask.type != "identifier":
            continue
        ident = text_of(mask)
        decl = unit.declarations_in_scope(call).get(ident)
        if decl is not None and decl[1] is not None:
            init = unwrap(decl[1])
            value = is_full_mask_32(init)
            if value and init.start_byte not in reported:
                reported.add(init.start_byte)
                yield Hit(init.start_byte, init.end_byte,
                          {"mask": f"{ident} = {value}", "func": name}, replacement=REPLACEMENT)
            continue
        value = macro_is_full_mask_32(unit, ident)
        if value:
            node = unit.macros[ident].child_by_field_name("value")
            if node is not None and node.start_byte not in reported:
                reported.add(node.start_byte)
                # the preproc_arg includes leading blanks: point at the value itself
                raw = node.text
                lead = len(raw) - len(raw.lstrip())
                trail = len(raw) - len(raw.rstrip())
                yield Hit(node.start_byte + lead, node.end_byte - trail,
                          {"mask": f"{ident} ({value})", "func": name}, replacement=REPLACEMENT)
