"""Lint of CUDA sources embedded in Python (found by portagpu.cuda.embedded):
findings come back at the Python file's own positions, and the parts of a
source that cannot be known are named in a PG699 finding."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from portagpu.cuda.embedded import (
    CUDA_CODE_MARKERS,
    SOURCE_ARGS,
    EmbeddedSource,
    find_free_sources,
    find_sources,
)
from portagpu.cuda.unit import CudaUnit
from portagpu.lint import tokenlines
from portagpu.lint.cuda.analysis import cuda_rules, format_message, lint_hits, to_findings
from portagpu.lint.model import Finding, LintSettings, Rule

UNCHECKED_CHECKER = "cuda_source_unknown"


def check_embedded(
    path: str, text: str, tree: ast.Module, rules: Sequence[Rule], settings: LintSettings
) -> list[Finding]:
    """Findings of the CUDA rules among `rules` for CUDA sources inside a Python module.

    Rules of other languages are ignored, so callers may pass their whole selection.
    """
    selected = cuda_rules(rules)
    unchecked = [r for r in rules if r.checker == UNCHECKED_CHECKER]
    if not selected and not unchecked:
        return []
    findings: list[Finding] = []
    # most modules name no kernel call and hold no CUDA: the searches narrowing made say so
    calls = tokenlines.mentions(text, SOURCE_ARGS)
    shared: dict = {}  # one parent map and resolver for both searches
    for source in find_sources(text, tree, settings.guard_names, shared) if calls else ():
        findings += _source_findings(path, source, selected, unchecked, settings)
    if selected and tokenlines.mentions(text, CUDA_CODE_MARKERS):
        # plainly-CUDA strings that reach no known call; a literal an API call
        # above already checked gives the same findings, kept once
        seen = {(f.line, f.col, f.code) for f in findings}
        for source in find_free_sources(text, tree, settings.guard_names, shared):
            findings += [
                f
                for f in _source_findings(path, source, selected, [], settings)
                if (f.line, f.col, f.code) not in seen
            ]
    findings.sort(key=Finding.sort_key)
    return findings


def _source_findings(
    path: str,
    source: EmbeddedSource,
    selected: list[Rule],
    unchecked: list[Rule],
    settings: LintSettings,
) -> list[Finding]:
    findings: list[Finding] = []
    mapped = source.mapped
    if selected and mapped.text.strip():
        unit = CudaUnit(mapped.text, tuple(settings.guard_macros))

        def locate(start: int, end: int, unit=unit, mapped=mapped):
            return mapped.locate(unit.index.char_offset(start), unit.index.char_offset(end))

        hits = lint_hits(unit, selected)
        exact = [
            (r, h)
            for r, h in hits
            if mapped.exact(unit.index.char_offset(h.start), unit.index.char_offset(h.end))
        ]
        inexact = [(r, h) for r, h in hits if (r, h) not in exact]
        findings += to_findings(path, exact, locate)
        findings += to_findings(path, inexact, locate, fixes=False)
    for rule in unchecked:
        if not mapped.unknown:
            continue
        (line, col), _ = mapped.unknown[0]
        parts = ", ".join(f"`{expr}`" for _, expr in mapped.unknown[:4])
        more = f" and {len(mapped.unknown) - 4} more" if len(mapped.unknown) > 4 else ""
        message = format_message(
            rule,
            {
                "call": source.callee,
                "argument": source.argument,
                "parts": parts + more,
            },
        )
        findings.append(Finding(path, line, col, line, col + 1, rule.id, message, rule.severity))
    return findings
