"""translate(): CUDA source -> HIP source plus an honest report.

1. The warp constructs that have a mechanical fix are found (portagpu.cuda.warp,
   the finders lint's PG5xx rules use too) and rewritten (64-bit masks,
   __popcll/__ffsll, PORTAGPU_WARP_SIZE instead of 32).
   With diagnose=True every PG5xx/PG6xx rule of lint's catalogue runs instead,
   and the constructs left in place (PTX, MMA, libraries, unrolled shuffles)
   are reported with lines; without it no lint module is loaded, which keeps
   the AMD run-time compile path (backends/amd) apart from lint.
3. An API renaming engine runs (hipify-perl, hipify-clang, PyTorch's tables or
   the built-in table), outside #if blocks already written for HIP.
4. portagpu_hip_compat.h is inlined when the result needs it, so one text
   builds on HIP 5.x and >= 6.3, wave32 and wave64 (hiprtc has no include path
   to it, which is why it is inlined rather than #included).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from portagpu.hipify_bridge import engines
from portagpu.hipify_bridge.warp_fixes import FIXERS, ByteEdit

from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.cuda.warp import FINDERS
from portagpu.lines import split_lines

HEADER_NAME = "portagpu_hip_compat.h"
NEEDS_HEADER = ("PORTAGPU_", "_sync", "__activemask", "__syncwarp")
# libraries whose HIP counterparts are separate packages (absent from Debian)
LIBRARY_PACKAGES = {
    "PG604": "hipCUB", "PG605": "hipBLAS", "PG606": "MIOpen", "PG607": "hipRAND",
    "PG608": "hipSPARSE", "PG609": "hipFFT", "PG610": "hipRTC",
}


@dataclass
class Report:
    """What translate did. `rule` in warp_rewrites is the rule id with
    diagnose=True, else the construct's `checker:` name; unconverted and
    libraries are filled only with diagnose=True."""

    engine: str
    converted: dict[str, int] = field(default_factory=dict)  # CUDA name -> count
    warp_rewrites: list[dict[str, Any]] = field(default_factory=list)
    unconverted: list[dict[str, Any]] = field(default_factory=list)
    libraries: list[str] = field(default_factory=list)  # HIP packages the result needs
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    header_inlined: bool = False

    @property
    def converted_total(self) -> int:
        return sum(self.converted.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "converted_refs": self.converted_total,
            "converted": dict(sorted(self.converted.items())),
            "warp_rewrites": self.warp_rewrites,
            "unconverted": self.unconverted,
            "libraries": self.libraries,
            "warnings": self.warnings,
            "notes": self.notes,
            "header_inlined": self.header_inlined,
        }


@dataclass
class Translation:
    text: str
    engine: str
    report: Report


@lru_cache(maxsize=1)
def compat_header() -> str:
    return resources.files("portagpu.hipify_bridge").joinpath(HEADER_NAME).read_text("utf-8")


@dataclass(frozen=True)
class _Found:
    checker: str  # the `checker:` name: picks the fixer
    label: str  # what the report names: rule id, or checker name without diagnose
    hit: Hit
    message: str = ""
    unit: CudaUnit | None = None  # where the hit was found: the source or its macro bodies


def _warp_constructs(unit: CudaUnit) -> Iterator[_Found]:
    """The rewritable constructs, in rule-id order as lint lists them, in
    the source and in the bodies of its function-like macros."""
    for part in unit.units():
        for name, find in FINDERS.items():
            for hit in part.unguarded(find(part, {})):
                yield _Found(name, name, hit, unit=part)


def _diagnosed(unit: CudaUnit) -> Iterator[_Found]:
    """Every CUDA rule's hits, with the rule's id and message."""
    from portagpu.lint.catalogue import load_catalogue
    from portagpu.lint.cuda.analysis import format_message, run_rules_by_unit

    rules = [r for r in load_catalogue() if r.language == "cuda"]
    for part, rule, hit in run_rules_by_unit(unit, rules):
        yield _Found(rule.checker, rule.id, hit, format_message(rule, hit.values), part)


def _apply(data: bytes, edits: list[ByteEdit]) -> bytes:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        data = data[: edit.start] + edit.text.encode("utf-8") + data[edit.end:]
    return data


def _overlaps(edit: ByteEdit, taken: list[ByteEdit]) -> bool:
    return any(edit.start < t.end and t.start < edit.end for t in taken)


def _rename_outside(text: str, guards: list[tuple[int, int]], data: bytes, runner) -> Any:
    """Run a table engine on the text outside HIP-guarded #if blocks only."""
    if not guards:
        return runner(text)
    pieces, converted, last = [], Counter(), 0
    result = None
    for start, end in sorted(guards):
        result = runner(data[last:start].decode("utf-8", "surrogatepass"))
        pieces += [result.text, data[start:end].decode("utf-8", "surrogatepass")]
        converted += result.converted
        last = end
    result = runner(data[last:].decode("utf-8", "surrogatepass"))
    pieces.append(result.text)
    result.text, result.converted = "".join(pieces), converted + result.converted
    return result


def _needs_header(unit: Any) -> bool:
    """Warp functions outside HIP-guarded blocks need the HIP 5.x shims."""
    data = unit.index.data
    for start, end in sorted(unit.guards, reverse=True):
        data = data[:start] + data[end:]
    return any(token.encode() in data for token in NEEDS_HEADER)


def _insert_header(text: str, header: str) -> str:
    """After a leading `#pragma once`, else at the top."""
    lines = split_lines(text, keepends=True)
    for i, line in enumerate(lines[:50]):
        if line.strip() == "#pragma once":
            return "".join(lines[: i + 1]) + header + "".join(lines[i + 1:])
    return header + text


def translate(
    source: str,
    *,
    warp_size: int | None = None,
    engine: str = "auto",
    header: str = "inline",
    guard_macros: tuple[str, ...] = (),
    diagnose: bool = False,
) -> Translation:
    """Translate CUDA C++ `source` to HIP.

    warp_size: pin PORTAGPU_WARP_SIZE (e.g. the device's, for run-time compiles);
      None leaves it to the compiler's per-target wavefront size.
    engine: "auto" (hipify-perl, hipify-clang, torch, builtin: the first present),
      or one of them by name (EngineUnavailable if absent).
    header: "inline" the compat header, "include" it by name, or "none".
    diagnose: run lint's CUDA rules to report, with rule ids and messages, what
      was not converted and which HIP libraries the result needs (`portagpu
      hipify` does); the translated text is the same either way.
    """
    chosen = engines.pick_engine(engine)
    report = Report(engine=chosen)
    unit = CudaUnit(source, guard_macros)
    if unit.root.has_error:
        from portagpu.cuda.parser import error_spans

        spans = error_spans(unit.tree)
        if spans:
            line, _ = unit.index.position(spans[0][0])
            report.warnings.append(
                f"line {line}: tree-sitter could not parse part of the source; "
                "warp constructs there were neither checked nor rewritten")

    edits: list[ByteEdit] = []
    for found in _diagnosed(unit) if diagnose else _warp_constructs(unit):
        hit = found.hit
        line, col = unit.index.position(hit.start)
        fixer = FIXERS.get(found.checker)
        part = found.unit or unit
        planned = fixer(part, hit) if fixer is not None else None
        if planned and not all(part.editable(e.start, e.end) for e in planned):
            planned = None  # it would break a macro's continuation line: reported instead
        before = unit.index.data[hit.start:hit.end].decode("utf-8", "replace")
        fresh = [e for e in planned or () if e not in edits]  # two rules may widen one type
        if planned and not any(_overlaps(e, edits) for e in fresh):
            edits += fresh
            report.warp_rewrites.append({
                "line": line, "col": col, "rule": found.label, "before": " ".join(before.split()),
                "after": "; ".join(e.text for e in planned),
            })
            continue
        if not diagnose:
            continue
        report.unconverted.append({
            "line": line, "col": col, "rule": found.label, "construct": " ".join(before.split())[:80],
            "message": found.message,
        })
        package = LIBRARY_PACKAGES.get(found.label)
        if package and package not in report.libraries:
            report.libraries.append(package)

    data = _apply(unit.index.data, edits)
    text = data.decode("utf-8", "surrogatepass")
    runner = engines.RUNNERS[chosen]
    if chosen in ("torch", "builtin") and unit.guards:
        # edits never touch guarded spans, but they shift offsets: re-find the guards
        from portagpu.cuda.unit import DEFAULT_GUARD_MACROS, guarded_spans

        guards = guarded_spans(text, DEFAULT_GUARD_MACROS + tuple(guard_macros))
        result = _rename_outside(text, guards, data, runner)
    else:
        result = runner(text)
    report.converted = dict(result.converted)
    report.warnings += result.warnings
    report.notes += result.notes
    if guard_macros or unit.guards:
        report.notes.append("code inside #if blocks already written for HIP was left as is")

    out = result.text
    if header != "none" and (edits or _needs_header(unit)):
        pin = f"#define PORTAGPU_WARP_SIZE {int(warp_size)}\n" if warp_size else ""
        body = compat_header() if header == "inline" else f'#include "{HEADER_NAME}"\n'
        out = _insert_header(out, pin + body)
        report.header_inlined = header == "inline"
    elif warp_size:
        out = f"#define PORTAGPU_WARP_SIZE {int(warp_size)}\n" + out
    report.unconverted.sort(key=lambda item: (item["line"], item["col"]))
    report.warp_rewrites.sort(key=lambda item: (item["line"], item["col"]))
    return Translation(out, chosen, report)
