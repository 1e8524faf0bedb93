"""Dispatch of one source text to the Python or CUDA checkers: `lint_text`
(the contract other areas call) and `lint_source` for raw bytes. A text that
does not parse is one PG901, a checker that crashes one PG907."""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import cache, lru_cache

from portagpu.lint import meta, tokenlines
from portagpu.lint.model import Finding, LintSettings, ParseFailure, Rule
from portagpu.lint.prescan import PreScan
from portagpu.lint.source import is_notebook
from portagpu.lint.suppression import apply_suppressions

Checker = Callable[[str, str, Sequence[Rule], LintSettings], list[Finding]]


@cache
def _checker(language: str) -> Checker | None:
    """The other areas' entry points, imported on first use; None until they exist."""
    try:
        if language == "python":
            from portagpu.lint.python import check_python

            return check_python
        if language == "cuda":
            from portagpu.lint.cuda import check_cuda_file

            return check_cuda_file
        if language == "deps":
            from portagpu.lint.deps import check_deps

            return check_deps
    except ImportError:
        return None
    return None


def checker_available(language: str) -> bool:
    return _checker(language) is not None


def rules_for(language: str, rules: Iterable[Rule]) -> list[Rule]:
    # a Python file may embed CUDA sources, which check_python hands to the
    # CUDA side with the CUDA rules; a .cu file needs only the CUDA rules; a
    # dependency list gets the Python rules that also read requirement lines
    wanted = {"python": ("python", "cuda"), "deps": ("python",)}.get(language, ("cuda",))
    return [r for r in rules if r.language in wanted and not meta.is_meta(r)]


def _syntax_check(text: str, path: str) -> None:
    """PG901 without a checker (none selected, or the Python side missing)."""
    try:
        compile(text, path, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:
        raise ParseFailure(exc.msg or "invalid syntax", exc.lineno or 1, exc.offset or 1) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseFailure(f"{type(exc).__name__}: {exc}") from None


def lint_text(
    text: str,
    *,
    path: str,
    language: str,
    rules: Sequence[Rule],
    settings: LintSettings,
) -> list[Finding]:
    """Findings of the given rules in one source text, suppressions applied.

    A text that does not parse yields one PG901 finding (if PG901 is among
    `rules`); a checker that crashes yields PG907 rather than ending the run."""
    by_id = {r.id: r for r in rules}
    codes = set(by_id)
    active = rules_for(language, rules)
    findings: list[Finding] = []
    try:
        check = _checker(language) if active else None
        if check is not None:
            findings = [f for f in _check(check, text, path, language, active, settings) if f.code in codes]
        elif language == "python" and meta.SYNTAX_ERROR in codes and not is_notebook(path):
            _syntax_check(text, path)
    except ParseFailure as exc:
        findings = []
        if meta.SYNTAX_ERROR in codes:
            findings.append(meta.meta_finding(meta.SYNTAX_ERROR, path, exc.message, line=exc.line, col=exc.col, rules=by_id))
        if language == "python" and active and not is_notebook(path):
            findings += [f for f in _salvaged(text, path, active, settings) if f.code in codes]
    except RecursionError:
        findings = internal_error(path, "nesting too deep for the checker", by_id)
    except Exception as exc:  # one bad file must not end a run over thousands
        findings = internal_error(path, f"{type(exc).__name__}: {exc}", by_id)
    findings = apply_suppressions(text, findings, language)
    return sorted(findings, key=Finding.sort_key)


# blank top-level blocks no rule can care about before parsing (narrow.py);
# PORTAGPU_LINT_FULL_PARSE=1 turns it off, e.g. to compare the findings
NARROW = os.environ.get("PORTAGPU_LINT_FULL_PARSE", "") in ("", "0")


# (tokens, words, conditional): what keeps a block anywhere, what keeps it
# as a whole word in code (narrow.narrow), and (required words, tokens) of
# the rules that count only in a file holding one of those words
Narrowing = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]]


def narrowing_key(rules: Sequence[Rule]) -> tuple[tuple[str, tuple[str, ...], str, tuple[str, ...], str], ...]:
    """What narrowing reads of the rules, hashable for _narrow_tokens' cache."""
    return tuple((r.id, r.tokens, r.language, r.requires, r.token_match) for r in rules)


@lru_cache(maxsize=16)
def _narrow_tokens(key: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...], str], ...]) -> Narrowing | None:
    """The tokens and words every file is narrowed by, as the pre-scan reads
    them, and (required words, tokens) of the rules that count only in a
    file holding one of those words."""
    rules = [
        Rule(i, "", "", lang, "info", (), "", "", "", "none", "", tokens=toks, requires=req, token_match=match)  # type: ignore[arg-type]
        for i, toks, lang, req, match in key
    ]
    scan = PreScan(rules, "python")
    if scan.everything or scan.embedded_everything:
        return None  # some rule cannot say what it looks for: keep everything
    return (scan.anywhere or ()) + (scan.triggers or ()), scan.words, scan.conditional


def _tokens_for(text: str, narrowing: Narrowing) -> tuple[str, ...]:
    """The tokens `text` is narrowed by: a rule inert here (none of its
    required words in the text) keeps no block of its own."""
    tokens, _, conditional = narrowing
    index = tokenlines.for_text(text)  # the one narrowing and the checkers search
    active = tuple(t for words, rule_tokens in conditional if any(map(index.has, words)) for t in rule_tokens)
    return tokens + active


def _check(check: Checker, text: str, path: str, language: str, rules: Sequence[Rule], settings: LintSettings) -> list[Finding]:
    if language == "python" and is_notebook(path):
        return _check_notebook(check, text, path, rules, settings)
    return _check_module(check, text, path, language, rules, settings)


def _check_notebook(check: Checker, text: str, path: str, rules: Sequence[Rule], settings: LintSettings) -> list[Finding]:
    """The code cells as one module; findings mapped back to the .ipynb text.
    A cell that does not parse is one PG901 and the other cells are linted."""
    from portagpu.lint import notebook

    book = notebook.unwrap(text)
    findings = notebook.to_file(book, _check_module(check, book.text, path, "python", rules, settings))
    by_id = {r.id: r for r in rules}
    for place, message, col in book.errors:
        found = meta.meta_finding(meta.SYNTAX_ERROR, path, message, line=place.raw_line, rules=by_id)
        findings.append(replace(found, cell=(place.cell, place.line, col)))
    return findings


def _check_module(check: Checker, text: str, path: str, language: str, rules: Sequence[Rule], settings: LintSettings) -> list[Finding]:
    if language == "python" and NARROW:
        from portagpu.lint.narrow import narrow

        narrowing = _narrow_tokens(narrowing_key(rules))
        tokens = _tokens_for(text, narrowing) if narrowing else None
        narrowed = narrow(text, tokens, narrowing[1]) if narrowing else None
        if narrowed is not None:
            try:
                return check(path, narrowed, rules, settings)
            except ParseFailure:
                pass  # parse the whole file: the error's position is then the real one
    return check(path, text, rules, settings)


def _salvaged(text: str, path: str, rules: Sequence[Rule], settings: LintSettings) -> list[Finding]:
    """The findings still visible in a .py file that does not parse (salvage.py);
    they carry no fix: the file could not be checked after one."""
    from dataclasses import replace

    from portagpu.lint.salvage import blank_bad_lines, string_module

    check = _checker("python")
    if check is None:
        return []
    fixed = blank_bad_lines(text)
    found: list[Finding] = []
    if fixed is not None:
        new_text, blanked = fixed
        try:
            found = [f for f in check(path, new_text, rules, settings) if f.line not in blanked]
        except ParseFailure:
            fixed = None
    if fixed is None:
        try:
            from portagpu.lint.cuda import check_embedded
        except ImportError:
            return []
        found = check_embedded(path, text, string_module(text), rules, settings)
    return [replace(f, fix=None) for f in found if f.code != meta.SYNTAX_ERROR]


def lint_source(
    data: bytes,
    *,
    path: str,
    language: str,
    rules: Sequence[Rule],
    settings: LintSettings,
) -> list[Finding]:
    """`lint_text` for a file's raw bytes: undecodable input is one PG903/PG904."""
    from portagpu.lint.source import Undecodable, decode_source

    text = decode_source(data, language)
    if isinstance(text, Undecodable):
        by_id = {r.id: r for r in rules}
        if text.code not in by_id:
            return []
        return [meta.meta_finding(text.code, path, text.detail, line=text.line, col=text.col, rules=by_id)]
    return lint_text(text, path=path, language=language, rules=rules, settings=settings)


def internal_error(path: str, detail: str, by_id: dict[str, Rule]) -> list[Finding]:
    """One PG907 (if selected) for a file a checker or worker failed on."""
    if meta.INTERNAL_ERROR not in by_id:
        return []
    return [meta.meta_finding(meta.INTERNAL_ERROR, path, detail.splitlines()[0][:300], rules=by_id)]


