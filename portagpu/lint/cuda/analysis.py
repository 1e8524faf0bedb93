"""Runs the C-level rules (PG5xx/PG6xx) of the catalogue over CUDA sources.

Each rule names a checker registered in registry.py (`fn(unit, rule) ->
Iterable[Hit]`, defined in checks/). Positions come from the unit's own text
for .cu files, or through a locator for sources embedded in Python.
"""

from __future__ import annotations

import dataclasses
import os
import re
import string
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

from portagpu.cuda.unit import (
    DEFINE_DIRECTIVE,
    CudaUnit,
    Hit,
    loose_error_bytes,
    switch_macros_defined,
)
from portagpu.lint.cuda import registry
from portagpu.lint.cuda.macros import macro_body_hits
from portagpu.lint.model import Edit, Finding, Fix, LintSettings, ParseFailure, Rule

# (start byte, end byte) of the unit -> (line, col, end_line, end_col) or None if unmappable
Locator = Callable[[int, int], "tuple[int, int, int, int] | None"]

_BLANKS = bytes(range(33))  # control characters and space: not counted as code
# Above this share of its non-blank bytes left loose in ERROR nodes, a file is unparseable.
MAX_ERROR_SHARE = 0.3


def cuda_rules(rules: Sequence[Rule]) -> list[Rule]:
    """The rules this analyser runs: language cuda with a checker it has."""
    return [r for r in rules if r.language == "cuda" and registry.get(r.checker) is not None]


class _Values(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def format_message(rule: Rule, values: dict[str, Any]) -> str:
    try:
        return string.Formatter().vformat(rule.message, (), _Values(values))
    except (ValueError, IndexError):
        return rule.message


def run_rules(unit: CudaUnit, rules: Sequence[Rule]) -> list[tuple[Rule, Hit]]:
    return [(rule, hit) for _, rule, hit in run_rules_by_unit(unit, rules)]


def _presence(text: str) -> Callable[[str], bool]:
    """`word in text`, remembered: rules share words (`32`, `mask`), so each
    is searched once per source."""
    present: dict[str, bool] = {}

    def holds(word: str) -> bool:
        found = present.get(word)
        if found is None:
            found = present[word] = word in text
        return found

    return holds


def run_rules_by_unit(unit: CudaUnit, rules: Sequence[Rule]) -> list[tuple[CudaUnit, Rule, Hit]]:
    """Each hit with the unit it was found in: the source, or the bodies of
    its function-like macros (unit.macro_unit). A macro hit whose edit would
    cross a continuation line keeps no replacement."""
    hits: list[tuple[CudaUnit, Rule, Hit]] = []
    seen: set[tuple[str, int, int]] = set()
    for part in unit.units():
        holds = _presence(part.text)
        for rule in cuda_rules(rules):
            if rule.tokens and not any(map(holds, rule.tokens)):
                continue  # the rule's pre-scan, per source: none of its words here
            if rule.requires and not any(map(holds, rule.requires)):
                continue  # inert here: it cannot fire without one of these words
            checker = registry.get(rule.checker)
            assert checker is not None
            for hit in part.unguarded(checker(part, rule)):
                if (rule.id, hit.start, hit.end) in seen:
                    continue
                seen.add((rule.id, hit.start, hit.end))
                if hit.replacement is not None and not part.editable(hit.start, hit.end):
                    hit = dataclasses.replace(hit, replacement=None)
                hits.append((part, rule, hit))
    return hits


def lint_hits(unit: CudaUnit, rules: Sequence[Rule]) -> list[tuple[Rule, Hit]]:
    """run_rules, plus the rules inside #define bodies (macros.py): what the
    linter reports, while hipify rewrites only what run_rules finds. A source
    written for AMD alone (unit.amd_only) has nothing to port: no hits."""
    if unit.amd_only:
        return []
    hits = run_rules(unit, rules)
    seen = {(rule.id, hit.start, hit.end) for rule, hit in hits}
    for rule, hit in macro_body_hits(unit, rules, run_rules):
        if (rule.id, hit.start, hit.end) not in seen:
            seen.add((rule.id, hit.start, hit.end))
            hits.append((rule, hit))
    return hits


def to_findings(
    path: str, hits: Iterable[tuple[Rule, Hit]], locate: Locator, *, fixes: bool = True
) -> list[Finding]:
    findings = []
    for rule, hit in hits:
        span = locate(hit.start, hit.end)
        if span is None:
            continue
        line, col, end_line, end_col = span
        fix = None
        if fixes and hit.replacement is not None and rule.fix != "none":
            fix = Fix(
                applicability="safe" if rule.fix == "safe" else "suggestion",
                message=f"replace with `{hit.replacement}`",
                edits=(Edit(line, col, end_line, end_col, hit.replacement),),
            )
        findings.append(
            Finding(path, line, col, end_line, end_col, rule.id,
                    format_message(rule, hit.values), rule.severity, fix)
        )
    findings.sort(key=Finding.sort_key)
    return findings


def ensure_parseable(unit: CudaUnit) -> None:
    """Raise ParseFailure when most tokens could not be placed in any construct.

    A conditional that splits a statement wraps a whole function in one ERROR
    node whose inside is still well structured, so the measure is the tokens
    sitting loose directly under ERROR nodes, not the ERROR spans themselves.
    """
    if not unit.root.has_error:
        return
    loose, first = loose_error_bytes(unit.root)
    total = max(1, len(unit.index.data.translate(None, _BLANKS)))
    if first is not None and loose / total > MAX_ERROR_SHARE:
        line, col = unit.index.position(first)
        raise ParseFailure(f"not parseable as CUDA C++ (first error at line {line})", line, col)


# the macros a conditional tests (`#ifdef GGML_CUDA_USE_CUB`, `#if defined(X) && Y`)
_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b([^\n]*)", re.M)
_MACRO = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]*)\b")  # project macros: upper case, words joined by _
_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
MAX_INCLUDES = 8


def _tested_macros(text: str) -> set[str]:
    """Project macros this file tests and does not #define itself (a
    toolkit's own, `__CUDA_ARCH__`, start with underscores and are left out)."""
    tested = {name for condition in _CONDITIONAL.findall(text) for name in _MACRO.findall(condition)}
    return tested - set(DEFINE_DIRECTIVE.findall(text)) if tested else tested


def included_switches(path: str, text: str, macros: tuple[str, ...]) -> tuple[str, ...]:
    """Project macros this file tests that a header it includes from beside
    it (`#include "common.cuh"`) defines only inside a vendor switch: the
    platform header's switch reaches every file that includes it, whether
    the macro names the platform (`MSCCLPP_DEVICE_CUDA`) or a feature only
    the CUDA build has (`GGML_CUDA_USE_CUB`, defined under `#if
    !defined(GGML_USE_HIP)`). The headers read are the file's dependencies
    (a changed header re-lints it)."""
    tested = _tested_macros(text) - set(macros)
    if not tested:
        return ()
    from portagpu.lint import dependencies

    folder = os.path.dirname(os.path.abspath(path))
    found: set[str] = set()
    for name in _LOCAL_INCLUDE.findall(text)[:MAX_INCLUDES]:
        header = os.path.join(folder, name)
        try:
            st = os.stat(header)
        except (OSError, ValueError):
            continue  # not beside this file (an include path we do not know)
        dependencies.note(header, st)
        found |= _header_switches(header, st.st_mtime_ns, st.st_size, macros) & tested
        if found == tested:
            break
    return tuple(sorted(found))


@lru_cache(maxsize=256)
def _header_switches(header: str, mtime_ns: int, size: int, macros: tuple[str, ...]) -> frozenset[str]:
    """The macros a header defines only inside a vendor switch; a header is
    read once per run however many files include it."""
    from portagpu.fileio import read_regular

    try:
        return switch_macros_defined(read_regular(header).decode("utf-8", "replace"), macros)
    except (OSError, ValueError):
        return frozenset()


def check_cuda_file(
    path: str, text: str, rules: Sequence[Rule], settings: LintSettings
) -> list[Finding]:
    """Findings of the given CUDA rules in a .cu/.cuh file's text.

    Raises ParseFailure when most of the file cannot be parsed; smaller syntax
    errors (macro tricks tree-sitter does not follow) leave the rest checked.
    """
    selected = cuda_rules(rules)
    if not selected:
        return []
    from portagpu.lint.vendor_paths import cuda_side_of_vendor_folders

    if cuda_side_of_vendor_folders(path):
        return []  # the build takes the rocm/ twin for AMD: a platform switch
    configured = tuple(settings.guard_macros)
    unit = CudaUnit(text, configured + included_switches(path, text, configured))
    ensure_parseable(unit)

    def locate(start: int, end: int) -> tuple[int, int, int, int]:
        return (*unit.index.position(start), *unit.index.position(end))

    return to_findings(path, lint_hits(unit, selected), locate)
