"""Python-level portability rules: `check_python` is the engine's entry point.

One `ast` parse, one pruned walk dispatching to every enabled checker, then
CUDA sources embedded in strings go to portagpu.lint.cuda.check_embedded.

    source.py    character columns, candidate lines (token search)
    imports.py   import aliases -> qualified names
    guards.py    which code is a deliberate vendor path (documented heuristics)
    context.py   the walk, guard tracking, reporting and edit helpers
    registry.py  `checker:` names -> functions; checkers/ holds one module per family
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Sequence

from portagpu.lint import tokenlines
from portagpu.lint.model import Finding, LintSettings, ParseFailure, Rule
from portagpu.lint.python import registry
from portagpu.lint.python.context import Context
from portagpu.lint.python.imports import ImportMap
from portagpu.lint.python.source import Source

__all__ = ["ParseFailure", "check_python", "parse"]


def parse(path: str, text: str) -> ast.Module:
    """Parse or raise ParseFailure(message, line, col) like ruff's E999."""
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        raise ParseFailure(f"SyntaxError: {exc.msg}", line, max(col, 1)) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError: NUL bytes; RecursionError: absurdly nested expressions
        raise ParseFailure(f"cannot parse: {exc}", 1, 1) from None


def _collect_imports(source: Source, tree: ast.Module) -> ImportMap:
    imports = ImportMap()
    lines = source.candidate_lines(("import",))
    if not lines:
        return imports

    def scan(body: list[ast.stmt], fallback: bool = False) -> None:
        for stmt in body:
            end = stmt.end_lineno or stmt.lineno
            if stmt.__class__ is ast.Import or stmt.__class__ is ast.ImportFrom:
                imports.add(stmt, fallback=fallback)
                continue
            if not _any_between(lines, stmt.lineno, end):
                continue
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(stmt, field, None)
                if inner:
                    if field in ("handlers", "cases"):
                        for handler in inner:
                            scan(handler.body, fallback or field == "handlers")
                    else:
                        scan(inner, fallback)

    scan(tree.body)
    return imports


def _any_between(lines: list[int], lo: int, hi: int) -> bool:
    from bisect import bisect_left

    i = bisect_left(lines, lo)
    return i < len(lines) and lines[i] <= hi


def check_python(
    path: str, text: str, rules: Sequence[Rule], settings: LintSettings
) -> list[Finding]:
    """Findings of the given Python-language rules (and embedded-CUDA rules) for one file."""
    plan = _plan(tuple(rules))
    reenable = gc.isenabled()
    # ast trees are large acyclic graphs: collections only cost time. The
    # tree is freed (by reference counts) before the collector is back, so
    # its millions of nodes never count towards a collection
    gc.disable()
    try:
        tree = parse(path, text)
        findings = _check_tree(path, text, tree, plan, settings) if plan.python else []
        if plan.cuda:
            findings.extend(_check_embedded(path, text, tree, plan.cuda, settings))
        del tree
    finally:
        if reenable:
            gc.enable()
    findings.sort(key=Finding.sort_key)
    return findings


class _Plan:
    """What one rule set asks of every file, worked out once per rule set
    (a run lints thousands of files with the same few sets)."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self.python = [r for r in rules if r.language == "python"]
        # CUDA rules, and Python-language rules whose checker lives on the CUDA side
        # (e.g. "kernel source not checkable"), go to portagpu.lint.cuda.check_embedded
        self.cuda = [r for r in rules if r.language == "cuda" or registry.get(r.checker) is None]
        # (rule, checker, tokens it needs one of, words it requires, line tokens)
        self.checked = []
        for rule in self.python:
            found = registry.get(rule.checker)
            if found is None:
                continue  # the engine validates checker names; unknown ones are inert here
            line_tokens = (*rule.tokens, *rule.options.get("extra_tokens", ()))
            # a rule with no tokens of its own is pre-scanned by nothing
            self.checked.append((rule, found, line_tokens if rule.tokens else (), rule.requires, line_tokens))
        # code -> the codes its finding replaces on the same spot (_drop_superseded)
        self.replaces = {r.id: tuple(r.options["supersedes"]) for r in self.python if r.options.get("supersedes")}


# keyed by the rule objects' ids; each plan holds its rules, so no id is reused while it lives
_plans: dict[tuple[int, ...], _Plan] = {}


def _plan(rules: tuple[Rule, ...]) -> _Plan:
    key = tuple(map(id, rules))
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) > 16:
            _plans.clear()
        plan = _plans[key] = _Plan(rules)
    return plan


def _check_tree(path, text, tree, plan: _Plan, settings) -> list[Finding]:
    source = Source(text)
    imports = _collect_imports(source, tree)
    dispatch: dict[type, list] = {}
    words: set[str] = set()
    mentions = tokenlines.for_text(text).has  # rules share tokens: each is searched once
    for rule, found, wanted, requires, line_tokens in plan.checked:
        if wanted and not any(map(mentions, wanted)):
            continue  # the rule's own pre-scan, per file (as the CUDA side does per source)
        if requires and not any(map(mentions, requires)):
            continue  # inert in this file: it cannot fire without one of these words
        for node_type in found.nodes:
            dispatch.setdefault(node_type, []).append((rule, found.fn))
        # a line holding one of these words is walked; `options.extra_tokens`
        # adds line-level words that would be too broad for the file pre-scan
        words.update(line_tokens)
    if not dispatch:
        return []
    # names bound by `from torch import cuda as c`, `import pynvml as nv`: lines
    # using them may hold none of the rule tokens
    aliases = {
        local
        for local, qual in imports.names.items()
        if not any(w in local for w in words) and any(w in qual for w in words)
    }
    lines = source.candidate_lines(words, aliases)
    if not lines:
        return []
    ctx = Context(path, source, tree, imports, settings, dispatch, lines)
    try:
        return _drop_superseded(ctx.run(), plan.replaces)
    except RecursionError:
        raise ParseFailure("too deeply nested to analyse", 1, 1) from None


def _drop_superseded(findings: list[Finding], replaces: dict[str, tuple[str, ...]]) -> list[Finding]:
    """A rule whose `options.supersedes` names other codes replaces their finding
    on the same spot (PG802's advice for set_device(local_rank) over PG101's)."""
    if not replaces:
        return findings
    drop = {(f.line, f.col, code) for f in findings for code in replaces.get(f.code, ())}
    return [f for f in findings if (f.line, f.col, f.code) not in drop]


def _check_embedded(path, text, tree, rules, settings) -> list[Finding]:
    try:
        from portagpu.lint.cuda import check_embedded
    except ImportError:
        return []  # the CUDA analyser is optional until it lands
    return list(check_embedded(path, text, tree, rules, settings))
