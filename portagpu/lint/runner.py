"""Running the files that must be parsed: here, or on a process pool fed in
chunks while discovery is still going, with the rules sent once per worker;
safe fixes are applied in the worker, looping until stable."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from portagpu.lint import dependencies
from portagpu.lint.dispatch import _checker, internal_error, lint_text
from portagpu.lint.model import Finding, LintSettings, Rule

Progress = Callable[[int, int], None]


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
    # other files the findings depend on (a guard flag's module): (path, mtime_ns, size)
    depends_on: tuple[dependencies.Dependency, ...] = ()


@dataclass(frozen=True)
class Job:
    path: str
    language: str
    text: str
    dropped: frozenset[str]  # per-file-ignores
    fix: bool
    unsafe: bool = False  # --unsafe-fixes: suggestions with edits are applied too


_WORKER: dict[str, object] = {}


def _set_state(rules: tuple[Rule, ...], settings: LintSettings) -> None:
    """What a job needs; set in this process too (no signals touched here:
    the caller of lint_paths keeps its own SIGINT handler)."""
    _WORKER["rules"] = rules
    _WORKER["settings"] = settings
    _WORKER["by_drop"] = {}


def _init_worker(rules: tuple[Rule, ...], settings: LintSettings, parent: int) -> None:
    """A pool worker: Ctrl-C reaches the whole process group, and only the
    parent acts on it (it kills the workers); a worker dies with its parent."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    _tune_gc()
    _set_state(rules, settings)


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel kills us when the parent dies (even by SIGKILL);
    elsewhere a thread watches for being re-parented."""
    import signal

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):
        import threading

        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)


def _watch_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


_THRESHOLDS = (50_000, 50, 100)


def _tune_gc() -> None:
    """Parsing allocates millions of small AST objects; the default gen-0
    threshold (700) makes the collector rescan them over and over (~13% of a
    cold run). Objects alive now (modules, rules) are frozen out of it."""
    import gc

    gc.freeze()
    gc.set_threshold(*_THRESHOLDS)


@contextmanager
def collector_tuned() -> Iterator[None]:
    """The thresholds of `_tune_gc` for this process while a run goes on
    (reading, pre-scanning, serial jobs: ~4% of the scan), the caller's after."""
    import gc

    thresholds = gc.get_threshold()
    gc.set_threshold(*_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def _rules_minus(dropped: frozenset[str]) -> tuple[Rule, ...]:
    cache: dict[frozenset[str], tuple[Rule, ...]] = _WORKER["by_drop"]  # type: ignore[assignment]
    if dropped not in cache:
        rules: tuple[Rule, ...] = _WORKER["rules"]  # type: ignore[assignment]
        cache[dropped] = tuple(r for r in rules if r.id not in dropped)
    return cache[dropped]


MAX_FIX_ROUNDS = 8


def _run_job(job: Job) -> FileOutcome:
    rules = _rules_minus(job.dropped)
    settings: LintSettings = _WORKER["settings"]  # type: ignore[assignment]
    dependencies.take()  # nothing left over from a job that failed
    findings = lint_text(job.text, path=job.path, language=job.language, rules=rules, settings=settings)
    outcome = FileOutcome(job.path, findings, parsed=True, depends_on=dependencies.take())
    if job.fix:
        _fix_job(job, rules, settings, outcome)
    return outcome


def _fix_job(job: Job, rules: Sequence[Rule], settings: LintSettings, outcome: FileOutcome) -> None:
    from portagpu.lint.fixes import UnsafeFix, apply_fixes, check_parses, safe_fixes

    text = job.text
    for _ in range(MAX_FIX_ROUNDS):  # a fix may expose another; stop when stable
        fixes = safe_fixes(outcome.findings, unsafe=job.unsafe)
        if not fixes:
            break
        candidate, applied = apply_fixes(text, fixes)
        if not applied or candidate == text:
            break
        try:
            check_parses(candidate, job.path, job.language, text)
        except UnsafeFix as exc:
            codes = sorted({f.code for f in outcome.findings if f.fix in fixes})
            outcome.error = f"fix for {', '.join(codes)} not applied: {exc}"
            break
        text = candidate
        outcome.fixed += applied
        outcome.findings = lint_text(text, path=job.path, language=job.language, rules=rules, settings=settings)
    if text != job.text:
        outcome.new_text, outcome.original_text = text, job.text


def run_here(job: Job, rules: tuple[Rule, ...], settings: LintSettings) -> FileOutcome:
    """One job in this process (a single file from an editor's stdin)."""
    _set_state(rules, settings)
    return _run_job(job)


def _run_chunk(jobs: list[Job]) -> list[FileOutcome]:
    return [_run_job(job) for job in jobs]


def _pool_context():
    import multiprocessing

    # fork: workers inherit the imported checkers; elsewhere, spawn
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


POOL_MIN_FILES = 8
CHUNK_FILES, CHUNK_CHARS = 8, 512 * 1024


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1  # honours taskset/cgroup cpusets
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Runner:
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
        self.buffer: list[Job] = []
        self.buffered_chars = 0
        self.total = 0
        _set_state(rules, settings)

    def add(self, job: Job) -> None:
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
            initargs=(self.rules, self.settings, os.getpid()),
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
        failed: list[Job] = []
        done = 0
        finished = False
        try:
            for outcomes, jobs, error in self._collect():
                if error is not None:
                    failed.extend(jobs)
                    continue
                done += len(outcomes)
                yield from outcomes
                if self.progress:
                    self.progress(done, self.total)
            finished = True
        finally:
            self.close(kill=not finished)  # Ctrl-C, or the caller stopped early
        if failed:
            yield from self._retry(failed)

    def _retry(self, jobs: list[Job]) -> Iterable[FileOutcome]:
        """One file at a time on a one-worker pool, so a failure names its
        file exactly; a fresh pool after each death."""
        by_id = {r.id: r for r in self.rules}
        workers, self.workers = self.workers, 1
        try:
            for job in jobs:
                if self.pool is None:
                    self._start_pool()
                try:
                    yield from self.pool.submit(_run_chunk, [job]).result()  # type: ignore[union-attr]
                except Exception as exc:  # noqa: BLE001 - this file killed a worker again
                    self.close(kill=True)
                    detail = f"worker process failed: {type(exc).__name__}: {exc}"
                    yield FileOutcome(job.path, internal_error(job.path, detail, by_id))
        finally:
            self.workers = workers
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
        with collector_tuned():  # also here: lint_one and callers of outcomes() alone
            for done, job in enumerate(self.buffer, 1):
                yield _run_job(job)
                if self.progress:
                    self.progress(done, self.total)

    def close(self, kill: bool = False) -> None:
        """Shut the pool down; kill=True (Ctrl-C, an error) ends the workers
        now instead of waiting for the chunks they are parsing."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        if not kill:
            pool.shutdown(wait=True, cancel_futures=True)
            return
        processes = list((getattr(pool, "_processes", None) or {}).values())
        for process in processes:
            process.terminate()  # SIGTERM: workers ignore only SIGINT
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(0.5)
            if process.is_alive():
                process.kill()
                process.join(0.5)
