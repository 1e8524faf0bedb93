"""The lint engine: dispatch of one text to the Python or CUDA checkers
(`lint_text`), and a whole run over files and folders (`lint_paths`).

Speed comes from not doing work: a file whose text holds none of the
selected rules' `tokens` is never parsed; findings are cached by content;
files that must be parsed are spread over a process pool in chunks, with
the rules sent once per worker."""

from __future__ import annotations

import ast
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache

from portagpu.lint import meta
from portagpu.lint.config import LintConfig
from portagpu.lint.model import Finding, LintSettings, ParseFailure, Rule
from portagpu.lint.suppression import add_noqa, apply_suppressions

Checker = Callable[[str, str, Sequence[Rule], LintSettings], list[Finding]]


# -- dispatch ----------------------------------------------------------------


@cache
def _checker(language: str) -> Checker | None:
    """The other areas' entry points, imported on first use; None until they exist."""
    try:
        if language == "python":
            from portagpu.lint.python import check_python

            return check_python
        if language == "cuda":
            from portagpu.cuda import check_cuda_file

            return check_cuda_file
    except ImportError:
        return None
    return None


def checker_available(language: str) -> bool:
    return _checker(language) is not None


def _rules_for(language: str, rules: Iterable[Rule]) -> list[Rule]:
    # a Python file may embed CUDA sources, which check_python hands to the
    # CUDA side with the CUDA rules; a .cu file needs only the CUDA rules
    wanted = ("python", "cuda") if language == "python" else ("cuda",)
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
    active = _rules_for(language, rules)
    findings: list[Finding] = []
    try:
        check = _checker(language) if active else None
        if check is not None:
            findings = [f for f in _check(check, text, path, language, active, settings) if f.code in codes]
        elif language == "python" and meta.SYNTAX_ERROR in codes:
            _syntax_check(text, path)
    except ParseFailure as exc:
        findings = []
        if meta.SYNTAX_ERROR in codes:
            findings.append(meta.meta_finding(meta.SYNTAX_ERROR, path, exc.message, line=exc.line, col=exc.col, rules=by_id))
    except RecursionError:
        findings = _internal(path, "nesting too deep for the checker", by_id)
    except Exception as exc:  # one bad file must not end a run over thousands
        findings = _internal(path, f"{type(exc).__name__}: {exc}", by_id)
    findings = apply_suppressions(text, findings, language)
    return sorted(findings, key=Finding.sort_key)


# blank top-level blocks no rule can care about before parsing (narrow.py);
# PORTAGPU_LINT_FULL_PARSE=1 turns it off, e.g. to compare the findings
NARROW = os.environ.get("PORTAGPU_LINT_FULL_PARSE", "") in ("", "0")


@lru_cache(maxsize=16)
def _narrow_tokens(key: tuple[tuple[str, tuple[str, ...], str], ...]) -> tuple[str, ...] | None:
    rules = [Rule(i, "", "", lang, "info", (), "", "", "", "none", "", tokens=toks) for i, toks, lang in key]  # type: ignore[arg-type]
    scan = PreScan(rules, "python")
    if scan.everything or scan.embedded_everything:
        return None  # some rule cannot say what it looks for: keep everything
    return (scan.tokens or ()) + (scan.triggers or ())


def _check(check: Checker, text: str, path: str, language: str, rules: Sequence[Rule], settings: LintSettings) -> list[Finding]:
    if language == "python" and NARROW:
        from portagpu.lint.narrow import narrow

        tokens = _narrow_tokens(tuple((r.id, r.tokens, r.language) for r in rules))
        narrowed = narrow(text, tokens) if tokens else None
        if narrowed is not None:
            try:
                return check(path, narrowed, rules, settings)
            except ParseFailure:
                pass  # parse the whole file: the error's position is then the real one
    return check(path, text, rules, settings)


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


def _internal(path: str, detail: str, by_id: dict[str, Rule]) -> list[Finding]:
    if meta.INTERNAL_ERROR not in by_id:
        return []
    return [meta.meta_finding(meta.INTERNAL_ERROR, path, detail.splitlines()[0][:300], rules=by_id)]


# -- pre-scan ------------------------------------------------------------------


# names of the Python calls that carry CUDA source (the CUDA side's list when
# it is installed): a .py file can only break a CUDA rule through one of them
EMBED_TRIGGERS = ("RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel",
                  "load_inline", "SourceModule", "compile_with_cache")


def _embed_triggers() -> tuple[str, ...]:
    try:
        from portagpu.cuda.embedded import SOURCE_ARGS

        return tuple(SOURCE_ARGS)
    except (ImportError, AttributeError):
        return EMBED_TRIGGERS


def _minimal_tokens(tokens: Iterable[str]) -> tuple[str, ...] | None:
    """Drops tokens that contain another token (`backends.cuda` when `cuda` is
    there: the shorter one matches whenever the longer does), shortest first."""
    unique = sorted({t for t in tokens if t}, key=lambda t: (len(t), t))
    kept: list[str] = []
    for token in unique:
        if not any(k in token for k in kept):
            kept.append(token)
    return tuple(kept) or None


def _has_any(text: str, tokens: tuple[str, ...] | None) -> bool:
    # `in` (CPython's fast substring search) beats one big alternation regex ~2x
    return tokens is not None and any(t in text for t in tokens)


class PreScan:
    """Decides from a file's text alone whether any selected rule could fire,
    so most files are never parsed. Substring search for the union of the rules'
    tokens; a rule with no tokens cannot be pre-filtered (every file is
    parsed). In a .py file the CUDA rules can only fire inside an embedded
    kernel source, so they count only next to a kernel-building call: their
    short tokens (`32`, `>>`, `mma`) would otherwise select half of all files."""

    def __init__(self, rules: Iterable[Rule], language: str = "cuda") -> None:
        rules = [r for r in rules if not meta.is_meta(r)]
        own = [r for r in rules if language == "cuda" or r.language == "python"]
        embedded = [r for r in rules if language == "python" and r.language == "cuda"]
        self.everything = any(not r.tokens for r in own)
        self.tokens = _minimal_tokens(t for r in own for t in r.tokens)
        self.triggers = _minimal_tokens(_embed_triggers()) if embedded else None
        self.embedded_everything = any(not r.tokens for r in embedded)
        self.embedded = _minimal_tokens(t for r in embedded for t in r.tokens)

    def wants(self, text: str) -> bool:
        if self.everything or _has_any(text, self.tokens):
            return True
        if not _has_any(text, self.triggers):
            return False
        return self.embedded_everything or _has_any(text, self.embedded)


# -- one file ----------------------------------------------------------------


@dataclass
class FileOutcome:
    path: str
    findings: list[Finding]
    parsed: bool = False
    cached: bool = False
    fixed: int = 0  # fixes applied
    new_text: str | None = None  # set when --fix/--diff changed the text
    original_text: str | None = None
    error: str | None = None  # a fix refused, a write failed


@dataclass(frozen=True)
class _Job:
    path: str
    language: str
    text: str
    dropped: frozenset[str]  # per-file-ignores
    fix: bool


_WORKER: dict[str, object] = {}


def _init_worker(rules: tuple[Rule, ...], settings: LintSettings, tune_gc: bool = True) -> None:
    if tune_gc:
        _tune_gc()
    _WORKER["rules"] = rules
    _WORKER["settings"] = settings
    _WORKER["by_drop"] = {}
    try:  # a worker started with Ctrl-C pending should die quietly
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ImportError, ValueError):
        pass


def _tune_gc() -> None:
    """Parsing allocates millions of small AST objects; the default gen-0
    threshold (700) makes the collector rescan them over and over (~13% of a
    cold run). Objects alive now (modules, rules) are frozen out of it."""
    import gc

    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


def _rules_minus(dropped: frozenset[str]) -> tuple[Rule, ...]:
    cache: dict[frozenset[str], tuple[Rule, ...]] = _WORKER["by_drop"]  # type: ignore[assignment]
    if dropped not in cache:
        rules: tuple[Rule, ...] = _WORKER["rules"]  # type: ignore[assignment]
        cache[dropped] = tuple(r for r in rules if r.id not in dropped)
    return cache[dropped]


MAX_FIX_ROUNDS = 8


def _run_job(job: _Job) -> FileOutcome:
    rules = _rules_minus(job.dropped)
    settings: LintSettings = _WORKER["settings"]  # type: ignore[assignment]
    findings = lint_text(job.text, path=job.path, language=job.language, rules=rules, settings=settings)
    outcome = FileOutcome(job.path, findings, parsed=True)
    if job.fix:
        _fix_job(job, rules, settings, outcome)
    return outcome


def _fix_job(job: _Job, rules: Sequence[Rule], settings: LintSettings, outcome: FileOutcome) -> None:
    from portagpu.lint.fixes import UnsafeFix, apply_fixes, check_parses, safe_fixes

    text = job.text
    for _ in range(MAX_FIX_ROUNDS):  # a fix may expose another; stop when stable
        fixes = safe_fixes(outcome.findings)
        if not fixes:
            break
        candidate, applied = apply_fixes(text, fixes)
        if not applied or candidate == text:
            break
        try:
            check_parses(candidate, job.path, job.language)
        except UnsafeFix as exc:
            codes = sorted({f.code for f in outcome.findings if f.fix in fixes})
            outcome.error = f"fix for {', '.join(codes)} not applied: {exc}"
            break
        text = candidate
        outcome.fixed += applied
        outcome.findings = lint_text(text, path=job.path, language=job.language, rules=rules, settings=settings)
    if text != job.text:
        outcome.new_text, outcome.original_text = text, job.text


def _run_chunk(jobs: list[_Job]) -> list[FileOutcome]:
    return [_run_job(job) for job in jobs]


# -- a run over paths ----------------------------------------------------------


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
    noqa_added: int = 0
    elapsed: float = 0.0
    missing_checkers: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return 1 if self.findings or self.errors else 0


Progress = Callable[[int, int], None]


def _pool_context():
    import multiprocessing

    # fork: workers inherit the imported checkers; elsewhere, spawn
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


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


def lint_paths(
    paths: Sequence[str | os.PathLike[str]],
    config: LintConfig | None = None,
    *,
    fix: bool = False,
    write: bool = True,
    add_noqa_comments: bool = False,
    progress: Progress | None = None,
) -> Result:
    """Lints files and folders. `fix` applies safe fixes (written only if
    `write`; otherwise the changes are in `Result.changed`, as for --diff);
    `add_noqa_comments` writes a suppression for each finding instead."""
    from portagpu.lint.fixes import encoding_for, write_atomic

    started = time.perf_counter()
    run = _Run(config or LintConfig(), fix=fix and not add_noqa_comments, baseline=add_noqa_comments)
    runner = _Runner(run.rules, run.settings, run.config.jobs, progress)
    try:
        run.scan(paths, runner)
    except BaseException:
        runner.close()
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
            result.fixed += outcome.fixed
            result.fixed_by_path[outcome.path] = outcome.fixed
            result.changed[outcome.path] = (outcome.original_text or "", outcome.new_text)
            if write:
                try:
                    write_atomic(outcome.path, outcome.new_text.encode(encoding_for(data, language)))
                except (OSError, UnicodeEncodeError, LookupError) as exc:
                    result.errors.append(f"{outcome.path}: fixed text not written: {exc}")
        elif not fix:
            run.cache.put(key, outcome.findings)
        result.findings.extend(outcome.findings)

    run.cache.save()
    result.missing_checkers = tuple(
        lang for lang in sorted(run.languages_run) if _rules_for(lang, run.rules) and not checker_available(lang)
    )
    result.findings.sort(key=Finding.sort_key)
    result.elapsed = time.perf_counter() - started
    return result


class _Run:
    """This process's side of a run: discovery, reading, the cache and the
    pre-scan; whatever must be parsed goes to the runner."""

    def __init__(self, config: LintConfig, *, fix: bool, baseline: bool) -> None:
        from portagpu.lint.cache import FindingsCache

        self.config, self.fix = config, fix
        self.rules = config.rules()
        self.rule_ids = [r.id for r in self.rules]
        self.by_id = {r.id: r for r in self.rules}
        self.settings = config.settings()
        self.result = Result(rules=self.rules)
        digest = config.fingerprint(self.rules) + repr(config.per_file_ignores)
        self.cache = FindingsCache(config.cache_path(), _short(digest), enabled=config.cache and not fix and not baseline)
        self.scans: dict[str, PreScan] = {}  # built on first need: a warm run never needs them
        too_large = self.by_id.get(meta.TOO_LARGE)
        self.max_bytes = int(too_large.options.get("max_bytes", meta.DEFAULT_MAX_BYTES)) if too_large else meta.DEFAULT_MAX_BYTES
        self.pending: dict[str, tuple[bytes, bytes, str]] = {}  # path -> (cache key, bytes, language)
        self.languages_run: set[str] = set()  # checked below, after the run: a warm run imports no checker

    def report(self, finding: Finding) -> None:
        if finding.code in self.by_id:
            self.result.findings.append(finding)

    def scan(self, paths: Sequence[str | os.PathLike[str]], runner: _Runner) -> None:
        from portagpu.lint.discovery import Candidate, discover

        config = self.config
        found = discover(
            paths,
            root=config.root,
            exclude=config.exclude,
            respect_gitignore=config.respect_gitignore,
            force_exclude=config.force_exclude,
        )
        for item in found:
            if isinstance(item, Candidate):
                self.result.files += 1
                self._file(item, runner)
            else:
                self.report(meta.meta_finding(item.code, item.path, item.detail, rules=self.by_id))

    def _file(self, item, runner: _Runner) -> None:
        from portagpu.lint.cache import content_key
        from portagpu.lint.source import Undecodable, decode_source

        result, cache = self.result, self.cache
        try:
            st = os.stat(item.path)
            key = cache.key_from_stat(item.real, st)
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
            with open(item.path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            self.report(meta.meta_finding(meta.UNREADABLE, item.path, exc.strerror or str(exc), rules=self.by_id))
            return
        key = content_key(item.real, data)
        cache.remember_stat(item.real, st, key)
        hit = cache.get(key, item.path)
        if hit is not None:
            result.cached += 1
            result.findings.extend(hit)
            return
        text = decode_source(data, item.language)
        if isinstance(text, Undecodable):
            found = meta.meta_finding(text.code, item.path, text.detail, line=text.line, col=text.col, rules=self.by_id)
            kept = [found] if found.code in self.by_id else []
            cache.put(key, kept)
            result.findings.extend(kept)
            return
        scan = self.scans.get(item.language)
        if scan is None:
            scan = self.scans[item.language] = PreScan(_rules_for(item.language, self.rules), item.language)
        if not scan.wants(text):
            result.prescan_skipped += 1
            cache.put(key, [])
            return
        dropped = _dropped_for(config=self.config, shown=item.path, real=item.real, rule_ids=self.rule_ids)
        self.pending[item.path] = (key, data, item.language)
        self.languages_run.add(item.language)
        runner.add(_Job(item.path, item.language, text, dropped, self.fix))


def _add_noqa(outcome, data, language, result, write_atomic, encoding_for) -> None:
    text = outcome.original_text or data.decode(encoding_for(data, language))
    todo = [f for f in outcome.findings if f.code not in meta.META_CODES]
    result.findings.extend(f for f in outcome.findings if f.code in meta.META_CODES)
    if not todo:
        return
    new_text = add_noqa(text, todo, language)
    if new_text == text:
        return
    try:
        write_atomic(outcome.path, new_text.encode(encoding_for(data, language)))
        result.noqa_added += len({(f.line, f.code) for f in todo})
        result.changed[outcome.path] = (text, new_text)
    except (OSError, UnicodeEncodeError, LookupError) as exc:
        result.errors.append(f"{outcome.path}: noqa comments not written: {exc}")


def _short(digest: str) -> str:
    import hashlib

    return hashlib.blake2b(digest.encode(), digest_size=12).hexdigest()


POOL_MIN_FILES = 8
CHUNK_FILES, CHUNK_CHARS = 8, 512 * 1024


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1  # honours taskset/cgroup cpusets
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _Runner:
    """Runs jobs here or on a process pool that starts as soon as there is
    enough work, so the workers parse while this process is still finding,
    reading and pre-scanning files. Chunks amortise the pickling; rules and
    settings reach each worker once, through the pool's initializer."""

    def __init__(self, rules: tuple[Rule, ...], settings: LintSettings, workers: int | None, progress: Progress | None) -> None:
        self.rules, self.settings, self.progress = rules, settings, progress
        self.workers = workers or _usable_cpus()
        self.pool = None
        self.futures: list = []
        self.chunks: dict = {}  # future -> its jobs, to report them if a worker dies
        self.buffer: list[_Job] = []
        self.buffered_chars = 0
        self.total = 0
        _init_worker(rules, settings, tune_gc=False)

    def add(self, job: _Job) -> None:
        self.total += 1
        self.buffer.append(job)
        self.buffered_chars += len(job.text)
        if self.pool is None and self.workers > 1 and self.total >= POOL_MIN_FILES:
            self._start_pool()
        if self.pool is not None and (len(self.buffer) >= CHUNK_FILES or self.buffered_chars >= CHUNK_CHARS):
            self._flush()

    def _start_pool(self) -> None:
        from concurrent.futures import ProcessPoolExecutor

        for language in ("python", "cuda"):
            _checker(language)  # imported before the fork, so workers inherit it
        self.pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=_pool_context(),
            initializer=_init_worker,
            initargs=(self.rules, self.settings),
        )

    def _flush(self) -> None:
        if self.buffer:
            future = self.pool.submit(_run_chunk, self.buffer)  # type: ignore[union-attr]
            self.futures.append(future)
            self.chunks[future] = self.buffer
            self.buffer, self.buffered_chars = [], 0

    def outcomes(self) -> Iterable[FileOutcome]:
        """Every job's outcome, as they finish. When a worker dies (killed,
        out of memory) the pool breaks and every unfinished chunk fails with
        it; those files are retried one per task on a fresh pool, so only the
        file that kills a worker again ends as PG907."""
        if self.pool is None:
            yield from self._serial()
            return
        self._flush()
        failed: list[_Job] = []
        done = 0
        try:
            for outcomes, jobs, error in self._collect():
                if error is not None:
                    failed.extend(jobs)
                    continue
                done += len(outcomes)
                yield from outcomes
                if self.progress:
                    self.progress(done, self.total)
        finally:
            self.close()
        if not failed:
            return
        self._start_pool()
        for job in failed:
            future = self.pool.submit(_run_chunk, [job])  # type: ignore[union-attr]
            self.futures.append(future)
            self.chunks[future] = [job]
        by_id = {r.id: r for r in self.rules}
        try:
            for outcomes, jobs, error in self._collect():
                if error is not None:
                    detail = f"worker process failed: {type(error).__name__}: {error}"
                    outcomes = [FileOutcome(j.path, _internal(j.path, detail, by_id)) for j in jobs]
                done += len(outcomes)
                yield from outcomes
        finally:
            self.close()

    def _collect(self):
        from concurrent.futures import as_completed

        futures, self.futures = self.futures, []
        for future in as_completed(futures):
            jobs = self.chunks.pop(future)
            try:
                yield future.result(), jobs, None
            except Exception as exc:  # noqa: BLE001 - reported per file by the caller
                yield [], jobs, exc

    def _serial(self) -> Iterable[FileOutcome]:
        import gc

        thresholds = gc.get_threshold()
        gc.set_threshold(50_000, 50, 100)  # see _tune_gc; restored for the caller
        try:
            for done, job in enumerate(self.buffer, 1):
                yield _run_job(job)
                if self.progress:
                    self.progress(done, self.total)
        finally:
            gc.set_threshold(*thresholds)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
