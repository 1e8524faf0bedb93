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
from pathlib import Path
from typing import Any

from portagpu.hipify_bridge import engines
from portagpu.hipify_bridge.warp_fixes import FIXERS, ByteEdit, typed_warp
from portagpu.hipify_bridge.warp_model import LOGICAL, NATIVE, WarpModels, choose_models

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import (
    CudaUnit,
    Hit,
    call_args,
    callee_name,
    enclosing_function,
    int_value,
    unwrap,
)
from portagpu.cuda.warp import FINDERS
from portagpu.cuda.warp.common import SHUFFLES, is_full_mask_32
from portagpu.lines import split_lines

HEADER_NAME = "portagpu_hip_compat.h"
NEEDS_HEADER = ("PORTAGPU_", "_sync", "__activemask", "__syncwarp")
LOGICAL_WARP = "PORTAGPU_LOGICAL_WARP_SIZE"
# logical32: a vote over this lane's 32-lane half of the wavefront
LOGICAL_VOTES = {"__ballot_sync": "portagpu_ballot32", "__any_sync": "portagpu_any32",
                 "__all_sync": "portagpu_all32", "__activemask": "portagpu_activemask32"}
# rewrites whose meaning depends on the warp width: applied in native functions only
WIDTH_FIXES = frozenset({"lane_arithmetic", "shuffle_loop", "shared_warp_array",
                         "warp_size_constant", "activemask_width", "ballot_width",
                         "warpsize_constexpr"})
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
    warp_models: list[dict[str, Any]] = field(default_factory=list)  # one per function
    kept: list[dict[str, Any]] = field(default_factory=list)  # 32s left as 32, and why
    blockers: list[dict[str, Any]] = field(default_factory=list)  # what HIP cannot compile
    suspect: list[dict[str, Any]] = field(default_factory=list)  # already-wrong originals

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
            "warp_models": self.warp_models,
            "kept": self.kept,
            "blockers": self.blockers,
            "suspect": self.suspect,
        }


@dataclass
class Translation:
    text: str
    engine: str
    report: Report
    line_map: list[int] = field(default_factory=list)  # output line - 1 -> input line (0: added)

    def original_line(self, line: int) -> int:
        """The input line an output line came from (0 for inserted text)."""
        return self.line_map[line - 1] if 0 < line <= len(self.line_map) else 0


def package_text(name: str) -> str:
    """A data file of this package: beside this module when installed as files
    (no zipfile import: it costs a one-file run ~20 ms), else through importlib."""
    here = Path(__file__).with_name(name)
    if here.is_file():
        return here.read_text(encoding="utf-8")
    return resources.files("portagpu.hipify_bridge").joinpath(name).read_text("utf-8")


@lru_cache(maxsize=1)
def compat_header() -> str:
    return package_text(HEADER_NAME)


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
    from portagpu.lint.cuda.analysis import format_message, run_rules_by_unit

    for part, rule, hit in run_rules_by_unit(unit, _cuda_rules()):
        yield _Found(rule.checker, rule.id, hit, format_message(rule, hit.values), part)


def _cuda_rules() -> tuple[Any, ...]:
    """The catalogue's CUDA rules, reading only the CUDA rule files (cuda_*.yaml):
    the whole catalogue's examples cost a one-file run ~0.1 s."""
    from portagpu.lint import catalogue

    files = [str(p) for p in catalogue.builtin_rule_files() if p.name.startswith("cuda_")]
    rules = catalogue._load(tuple(files)) if files else catalogue.load_catalogue()
    return tuple(r for r in rules if r.language == "cuda")


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


class _Plan:
    """The byte edits of one source: warp fixes per the function's model, the
    logical32 rewrites, blocker shims; and what the report says of each."""

    def __init__(self, unit: CudaUnit, models: WarpModels, key: str, report: Report) -> None:
        self.unit, self.models, self.key, self.report = unit, models, key, report
        self.edits: list[ByteEdit] = []

    def add(self, planned: list[ByteEdit]) -> bool:
        fresh = [e for e in planned if e not in self.edits]  # two rules may widen one type
        if any(_overlaps(e, self.edits) for e in fresh):
            return False
        self.edits += fresh
        return True

    def _where(self, start: int) -> tuple[int, int]:
        return self.unit.index.position(start)

    def keep(self, found: _Found, why: str) -> None:
        line, col = self._where(found.hit.start)
        before = self.unit.index.data[found.hit.start:found.hit.end].decode("utf-8", "replace")
        self.report.kept.append({"line": line, "col": col, "rule": found.label,
                                 "construct": " ".join(before.split())[:80], "why": why})

    def rewrite(self, found: _Found, planned: list[ByteEdit]) -> bool:
        if not planned or not self.add(planned):
            return False
        line, col = self._where(found.hit.start)
        before = self.unit.index.data[found.hit.start:found.hit.end].decode("utf-8", "replace")
        self.report.warp_rewrites.append({
            "line": line, "col": col, "rule": found.label, "before": " ".join(before.split()),
            "after": "; ".join(e.text for e in planned),
        })
        return True

    def warp_finding(self, found: _Found) -> bool:
        """Rewrite, keep or (False) leave to the report as not converted."""
        fm = self.models.at(self.key, found.hit.start)
        model = fm.model if fm is not None else None
        checker = found.checker
        if checker == "warp_size_constant" and fm is None:
            const = self._constant_at(found.hit.start)
            if const is not None and not const.rewrite_definition:
                self.keep(found, "stays 32: host code or a logical32 kernel reads it; native "
                          "kernels get PORTAGPU_WARP_SIZE where they use it")
                return True
            if const is not None:
                return self.rewrite(found, [ByteEdit(*const.literal_span, typed_warp(const.suffix))])
        if checker in WIDTH_FIXES:
            if model == LOGICAL:
                self.keep(found, f"`{fm.name}` keeps 32-lane warps (logical32)")
                return True
            if model is None and self._in_function(found.hit.start):
                self.keep(found, "host code keeps host values")
                return True
        elif checker == "tiled_partition" and model == LOGICAL:
            return True  # the reason for its model: reported there
        elif checker == "warpsize_constexpr" and model == LOGICAL:
            return True  # every warpSize of a logical32 function reads 32
        elif checker == "launch_width" and self._kernel_is_logical(found.hit.values.get("kernel", "")):
            # the 32-thread launch made the kernel logical32 (its warpSize reads 32): they agree
            self.keep(found, f"`{found.hit.values['kernel']}` keeps 32-lane warps (logical32)")
            return True
        fixer = FIXERS.get(checker)
        part = found.unit or self.unit  # the source, or the body of one of its macros
        planned = fixer(part, found.hit) if fixer is not None else None
        if planned and not all(part.editable(e.start, e.end) for e in planned):
            planned = None  # it would break a macro's continuation line: reported instead
        return self.rewrite(found, planned or [])

    def _kernel_is_logical(self, name: str) -> bool:
        return any(fm.name == name and fm.model == LOGICAL for fm in self.models.functions.get(self.key, ()))

    def _constant_at(self, start: int) -> Any:
        for const in self.models.constants.values():
            if const.key == self.key and const.node.start_byte == start:
                return const
        return None

    def _in_function(self, start: int) -> bool:
        node = self.unit.root.descendant_for_byte_range(start, start + 1)
        return node is not None and (node.type == "function_definition"
                                     or enclosing_function(node) is not None)

    def constant_uses(self) -> None:
        """Native functions read a kept-at-32 warp constant as PORTAGPU_WARP_SIZE."""
        kept = {c.name: c for c in self.models.constants.values() if not c.rewrite_definition}
        if not kept:
            return
        for node in self.unit.nodes("identifier"):
            const = kept.get(text_of(node))
            if const is None or self.unit.is_guarded(node.start_byte):
                continue
            if self.models.model_at(self.key, node.start_byte) == NATIVE:
                if self.add([ByteEdit(node.start_byte, node.end_byte, typed_warp(const.suffix))]):
                    line, col = self._where(node.start_byte)
                    self.report.warp_rewrites.append({
                        "line": line, "col": col, "rule": "warp-model",
                        "before": const.name, "after": typed_warp(const.suffix)})

    def logical_pass(self) -> None:
        """logical32 functions: shuffles of width 32, votes over this lane's half,
        masks placed in this lane's half, warpSize read as 32."""
        for fm in self.models.functions.get(self.key, ()):
            if fm.model != LOGICAL:
                continue
            for node in self.unit.nodes("call_expression", "identifier"):
                if not (fm.start <= node.start_byte < fm.end) or self.unit.is_guarded(
                        node.start_byte):
                    continue
                if node.type == "identifier":
                    if text_of(node) == "warpSize":
                        self.add([ByteEdit(node.start_byte, node.end_byte, LOGICAL_WARP)])
                    continue
                self._logical_call(node)

    def _logical_call(self, call: Any) -> None:
        name = callee_name(call)
        function = call.child_by_field_name("function")
        args = call_args(call)
        if name in LOGICAL_VOTES and function is not None and function.type == "identifier":
            self.add([ByteEdit(function.start_byte, function.end_byte, LOGICAL_VOTES[name])])
        if name in SHUFFLES:
            width_at = 3 if name.endswith("_sync") else 2
            arglist = call.child_by_field_name("arguments")
            if len(args) == width_at and arglist is not None:
                close = arglist.end_byte - 1
                self.add([ByteEdit(close, close, f", {LOGICAL_WARP}")])
        if (name.endswith("_sync") and name not in LOGICAL_VOTES) or name == "__syncwarp":
            mask = unwrap(args[0]) if args else None
            if mask is not None and not is_full_mask_32(mask) and not _wide_literal(mask):
                self.add([ByteEdit(mask.start_byte, mask.start_byte, "portagpu_half_mask("),
                          ByteEdit(mask.end_byte, mask.end_byte, ")")])


def _wide_literal(node: Any) -> bool:
    value = int_value(node)
    return value is not None and "ll" in value[1]


def line_map(before: str, after: str) -> list[int]:
    """For each line of `after`, the line of `before` it came from (0: inserted)."""
    import difflib

    old, new = before.splitlines(), after.splitlines()
    out = [0] * len(new)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(j2 - j1):
                out[j1 + k] = i1 + k + 1
        elif tag == "replace":
            for k in range(j2 - j1):
                out[j1 + k] = i1 + min(k, i2 - i1 - 1) + 1
    return out


def translate(
    source: str,
    *,
    warp_size: int | None = None,
    engine: str = "auto",
    header: str = "inline",
    guard_macros: tuple[str, ...] = (),
    diagnose: bool = False,
    models: WarpModels | None = None,
    key: str = "<source>",
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
    models: the warp model of every function, chosen over a whole set of
      sources (`choose_models`; `portagpu hipify` passes one per run, `key`
      naming this source in it); None chooses over this source alone.
    """
    from portagpu.hipify_bridge import blockers

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
    if models is None:
        models = choose_models({key: unit})

    plan = _Plan(unit, models, key, report)
    for found in _diagnosed(unit) if diagnose else _warp_constructs(unit):
        if plan.warp_finding(found) or not diagnose:
            continue
        hit = found.hit
        line, col = unit.index.position(hit.start)
        before = unit.index.data[hit.start:hit.end].decode("utf-8", "replace")
        report.unconverted.append({
            "line": line, "col": col, "rule": found.label, "construct": " ".join(before.split())[:80],
            "message": found.message,
        })
        package = LIBRARY_PACKAGES.get(found.label)
        if package and package not in report.libraries:
            report.libraries.append(package)
    plan.constant_uses()
    plan.logical_pass()
    defines: list[str] = []
    if blockers.uses(source):
        scan = blockers.scan(unit)
        plan.add([e for e in scan.edits if not _overlaps(e, plan.edits)])
        report.blockers = scan.items
        defines = scan.defines
    report.warp_models = models.report(key)
    report.suspect = [{"line": fm["line"], "function": fm["function"], "message": text}
                      for fm in report.warp_models for text in fm["suspect"]]
    edits = plan.edits

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
    pin = f"#define PORTAGPU_WARP_SIZE {int(warp_size)}\n" if warp_size else ""
    pin += "".join(f"#define {name} 1\n" for name in defines)
    if header != "none" and (edits or _needs_header(unit)):
        body = compat_header() if header == "inline" else f'#include "{HEADER_NAME}"\n'
        out = _insert_header(out, pin + body)
        report.header_inlined = header == "inline"
    elif pin:
        out = pin + out
    report.unconverted.sort(key=lambda item: (item["line"], item["col"]))
    report.warp_rewrites.sort(key=lambda item: (item["line"], item["col"]))
    report.kept.sort(key=lambda item: (item["line"], item["col"]))
    return Translation(out, chosen, report, line_map(source, out))
