"""The lint engine: a whole run over files and folders (`lint_paths`).

Speed comes from not doing work: a file whose text holds none of the
selected rules' `tokens` is never parsed (prescan.py); in the files that
are, top-level blocks no rule can care about are blanked first (narrow.py);
findings are cached by content (cache.py); what must be parsed is spread
over a process pool (runner.py). One text is dispatched by dispatch.py."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from portagpu.lint import meta
from portagpu.lint.config import LintConfig
from portagpu.lint.dispatch import checker_available, lint_source, lint_text, rules_for
from portagpu.lint.model import Finding, Rule
from portagpu.lint.prescan import PreScan
from portagpu.lint.runner import FileOutcome, Job, Progress, Runner, collector_tuned, run_here
from portagpu.lint.suppression import add_noqa

# the cache key of every header without device code: one entry for them all,
# and the stat index still spares a warm run reading them
NOT_CUDA_HEADER = b"\0plain-c-header\0"

__all__ = ["PreScan", "Result", "checker_available", "lint_one", "lint_paths", "lint_source", "lint_text"]


@dataclass
class Result:
    findings: list[Finding] = field(default_factory=list)
    rules: tuple[Rule, ...] = ()
    files: int = 0  # files discovered
    parsed: int = 0  # handed to a checker
    cached: int = 0  # answered from the cache
    prescan_skipped: int = 0  # no token of any rule: never parsed
    fixed: int = 0  # fixes applied (or that --diff would apply)
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (old, new)
    fixed_by_path: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # refused fixes, failed writes
    warnings: list[str] = field(default_factory=list)  # e.g. a damaged cache file, ignored
    noqa_added: int = 0
    elapsed: float = 0.0
    missing_checkers: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return 1 if self.findings or self.errors else 0




@lru_cache(maxsize=8)
def _per_file_specs(per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...]):
    import pathspec

    return [(pathspec.GitIgnoreSpec.from_lines([pattern]), selectors) for pattern, selectors in per_file_ignores]


def _dropped_for(config: LintConfig, shown: str, real: str, rule_ids: Sequence[str]) -> frozenset[str]:
    """Codes that `per-file-ignores` turns off for this file (patterns are
    gitignore-style, relative to the config's folder)."""
    if not config.per_file_ignores:
        return frozenset()
    rel = os.path.relpath(real, config.root.resolve()).replace(os.sep, "/")
    dropped: set[str] = set()
    for spec, selectors in _per_file_specs(config.per_file_ignores):
        if spec.match_file(rel) or spec.match_file(shown.replace(os.sep, "/")):
            dropped.update(i for i in rule_ids for s in selectors if s == "ALL" or i.startswith(s))
    return frozenset(dropped)


def out_of_scope(rules: Sequence[Rule], path: str, language: str) -> frozenset[str]:
    """Rules that do not read this Python source (their `only_files` name
    others): dropped for it, so neither its pre-scan nor its walk asks them."""
    rules = [r for r in rules if r.only_files]
    if language != "python" or not rules:
        return frozenset()
    import fnmatch

    name = os.path.basename(path)
    return frozenset(
        r.id for r in rules if not any(fnmatch.fnmatchcase(name, p) for p in r.only_files)
    )


def _prescan(scans: dict[tuple[str, frozenset[str]], PreScan], rules: Sequence[Rule], language: str, scoped_out: frozenset[str]) -> PreScan:
    key = (language, scoped_out)
    scan = scans.get(key)
    if scan is None:
        scan = scans[key] = PreScan([r for r in rules_for(language, rules) if r.id not in scoped_out], language)
    return scan


def lint_paths(
    paths: Sequence[str | os.PathLike[str]],
    config: LintConfig | None = None,
    *,
    fix: bool = False,
    write: bool = True,
    add_noqa_comments: bool = False,
    progress: Progress | None = None,
    unsafe_fixes: bool = False,
) -> Result:
    """Lints files and folders. `fix` applies safe fixes (written only if
    `write`; otherwise the changes are in `Result.changed`, as for --diff);
    `unsafe_fixes` adds the suggestions that carry edits; `add_noqa_comments`
    writes a suppression for each finding instead."""
    from portagpu.lint.fixes import encoding_for, write_atomic

    started = time.perf_counter()
    run = _Run(config or LintConfig(), fix=fix and not add_noqa_comments, baseline=add_noqa_comments)
    run.unsafe = unsafe_fixes
    runner = Runner(run.rules, run.settings, run.config.jobs, progress)
    try:
        with collector_tuned():
            run.scan(paths, runner)
    except BaseException:
        runner.close(kill=True)
        raise
    result = run.result
    for outcome in runner.outcomes():
        result.parsed += 1
        key, data, language = run.pending.pop(outcome.path)
        if outcome.error:
            result.errors.append(f"{outcome.path}: {outcome.error}")
        if add_noqa_comments:
            _add_noqa(outcome, data, language, result, write_atomic, encoding_for)
            continue
        if outcome.new_text is not None:
            written = True
            if write:
                try:
                    new_bytes = outcome.new_text.encode(encoding_for(data, language))
                    write_atomic(outcome.path, new_bytes, expect=data)
                except (OSError, UnicodeEncodeError, LookupError) as exc:
                    written = False
                    result.errors.append(f"{outcome.path}: fixed text not written: {_reason(exc)}")
            if written:  # a fix that did not reach the disk is not counted as made
                result.fixed += outcome.fixed
                result.fixed_by_path[outcome.path] = outcome.fixed
                result.changed[outcome.path] = (outcome.original_text or "", outcome.new_text)
        elif not fix:
            run.cache.put(key, outcome.findings, outcome.depends_on)
        result.findings.extend(outcome.findings)

    run.cache.save()
    result.warnings.extend(run.cache.warnings)
    result.missing_checkers = tuple(
        lang for lang in sorted(run.languages_run) if rules_for(lang, run.rules) and not checker_available(lang)
    )
    result.findings.sort(key=Finding.sort_key)
    result.elapsed = time.perf_counter() - started
    return result


def lint_one(
    text: str, path: str, config: LintConfig | None = None, *, fix: bool = False, unsafe_fixes: bool = False
) -> FileOutcome:
    """`text` linted as if it were the file `path` (an editor's unsaved buffer,
    `--stdin-filename`): the same rules, per-file-ignores and pre-scan as a
    run over the tree, no cache. With `fix`, `new_text` holds the fixed text."""
    from portagpu.lint.source import SNIFFED, is_stub, named_language, sniffed_language

    if is_stub(path):
        return FileOutcome(path, [])
    config = config or LintConfig()
    rules = config.rules()
    language = named_language(path)
    if language in SNIFFED:
        language = sniffed_language(language, text.encode("utf-8", "surrogatepass"))
        if language is None:  # plain C/C++
            return FileOutcome(path, [])
    scoped_out = out_of_scope(rules, path, language)
    if not _prescan({}, rules, language, scoped_out).wants(text):
        return FileOutcome(path, [])
    dropped = _dropped_for(config, path, os.path.abspath(path), [r.id for r in rules]) | scoped_out
    return run_here(Job(path, language, text, dropped, fix, unsafe_fixes), rules, config.settings())


class _Run:
    """This process's side of a run: discovery, reading, the cache and the
    pre-scan; whatever must be parsed goes to the runner."""

    def __init__(self, config: LintConfig, *, fix: bool, baseline: bool) -> None:
        from portagpu.lint.cache import FindingsCache

        self.config, self.fix = config, fix
        self.unsafe = False  # --unsafe-fixes
        self.keep_bytes = fix or baseline  # to write files back in their own encoding
        self.rules = config.rules()
        self.rule_ids = [r.id for r in self.rules]
        self.by_id = {r.id: r for r in self.rules}
        self.scoped = [r for r in self.rules if r.only_files]  # see out_of_scope
        self.settings = config.settings()
        self.result = Result(rules=self.rules)
        digest = config.fingerprint(self.rules) + repr(config.per_file_ignores)
        self.cache = FindingsCache(config.cache_path(), _short(digest), enabled=config.cache and not fix and not baseline)
        # built on first need (a warm run never needs them), per language and
        # the rules a file's name puts out of scope
        self.scans: dict[tuple[str, frozenset[str]], PreScan] = {}
        too_large = self.by_id.get(meta.TOO_LARGE)
        self.max_bytes = int(too_large.options.get("max_bytes", meta.DEFAULT_MAX_BYTES)) if too_large else meta.DEFAULT_MAX_BYTES
        self.pending: dict[str, tuple[bytes, bytes, str]] = {}  # path -> (cache key, bytes, language)
        self.languages_run: set[str] = set()  # checked below, after the run: a warm run imports no checker

    def report(self, finding: Finding) -> None:
        if finding.code in self.by_id:
            self.result.findings.append(finding)

    def scan(self, paths: Sequence[str | os.PathLike[str]], runner: Runner) -> None:
        from portagpu.lint.discovery import Candidate, discover

        config = self.config
        found = discover(
            paths,
            root=config.root,
            exclude=config.excludes(),
            respect_gitignore=config.respect_gitignore,
            force_exclude=config.force_exclude,
        )
        for item in found:
            if isinstance(item, Candidate):
                self.result.files += 1
                self._file(item, runner)
            else:
                self.report(meta.meta_finding(item.code, item.path, item.detail, rules=self.by_id))

    def _file(self, item, runner: Runner) -> None:
        from portagpu.fileio import read_regular
        from portagpu.lint.cache import content_key
        from portagpu.lint.source import (
            SNIFFED,
            Undecodable,
            decode_source,
            is_stub,
            sniffed_language,
        )

        result, cache = self.result, self.cache
        if is_stub(item.path):  # declarations only: nothing in it runs, so nothing breaks
            result.prescan_skipped += 1
            return
        try:
            st = os.stat(item.path)
            key = cache.key_from_stat(item.real, st)
            if key == NOT_CUDA_HEADER:  # an unchanged plain header: nothing to copy
                result.cached += 1
                cache.remember_stat(item.real, st, key)
                return
            hit = cache.get(key, item.path) if key is not None else None
            if hit is not None:  # unchanged since the last run: not even read
                result.cached += 1
                result.findings.extend(hit)
                cache.remember_stat(item.real, st, key)
                return
            if st.st_size > self.max_bytes:
                detail = f"{st.st_size:,} bytes (limit {self.max_bytes:,})"
                self.report(meta.meta_finding(meta.TOO_LARGE, item.path, detail, rules=self.by_id))
                return
            data = read_regular(item.path)  # never blocks on a FIFO swapped in meanwhile
        except OSError as exc:
            self.report(meta.meta_finding(meta.UNREADABLE, item.path, exc.strerror or str(exc), rules=self.by_id))
            return
        language = item.language
        if language in SNIFFED:
            language = sniffed_language(language, data)
            if language is None:  # plain C/C++: nothing to lint, cached as such
                cache.remember_stat(item.real, st, NOT_CUDA_HEADER)
                cache.put(NOT_CUDA_HEADER, [])
                result.prescan_skipped += 1
                return
        key = content_key(item.real, data)
        cache.remember_stat(item.real, st, key)
        hit = cache.get(key, item.path)
        if hit is not None:
            result.cached += 1
            result.findings.extend(hit)
            return
        text = decode_source(data, language)
        if isinstance(text, Undecodable):
            found = meta.meta_finding(text.code, item.path, text.detail, line=text.line, col=text.col, rules=self.by_id)
            kept = [found] if found.code in self.by_id else []
            cache.put(key, kept)
            result.findings.extend(kept)
            return
        scoped_out = out_of_scope(self.scoped, item.path, language)
        if not _prescan(self.scans, self.rules, language, scoped_out).wants(text):
            result.prescan_skipped += 1
            cache.put(key, [])
            return
        dropped = _dropped_for(config=self.config, shown=item.path, real=item.real, rule_ids=self.rule_ids)
        dropped |= scoped_out
        self.pending[item.path] = (key, data if self.keep_bytes else b"", language)
        self.languages_run.add(language)
        runner.add(Job(item.path, language, text, dropped, self.fix, self.unsafe))


def _add_noqa(outcome, data, language, result, write_atomic, encoding_for) -> None:
    text = outcome.original_text or data.decode(encoding_for(data, language))
    todo = [f for f in outcome.findings if f.code not in meta.META_CODES]
    result.findings.extend(f for f in outcome.findings if f.code in meta.META_CODES)
    if not todo:
        return
    from portagpu.lint.source import is_notebook

    if is_notebook(outcome.path):
        from portagpu.lint.notebook import add_noqa as add_noqa_to_notebook

        new_text = add_noqa_to_notebook(text, todo)
    else:
        new_text = add_noqa(text, todo, language)
    if new_text == text:
        return
    try:
        write_atomic(outcome.path, new_text.encode(encoding_for(data, language)), expect=data)
        result.noqa_added += len({(f.line, f.code) for f in todo})
        result.changed[outcome.path] = (text, new_text)
    except (OSError, UnicodeEncodeError, LookupError) as exc:
        result.errors.append(f"{outcome.path}: noqa comments not written: {_reason(exc)}")


def _reason(exc: Exception) -> str:
    """An OSError as its reason alone ("Permission denied"), the path being shown already."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def _short(digest: str) -> str:
    import hashlib

    return hashlib.blake2b(digest.encode(), digest_size=12).hexdigest()


