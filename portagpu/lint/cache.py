"""Findings cached by file content, so an unchanged tree re-lints at once.

One pickle per (portagpu version, rule set + settings + checker code) under
`.portagpu_cache/`; entries are keyed by a hash of the file's real path and
bytes. A stat index (mtime_ns, size, inode -> that hash) lets an unchanged
file skip even the read, as ruff's cache does; a file modified within the
last two seconds is not indexed (its mtime may not yet tell edits apart).
Written atomically; a corrupt or foreign cache file is ignored."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from portagpu.lint.model import Finding

_FORMAT = 2
_RACY_SECONDS = 2.0
_KEEP_FILES = 8  # cache files of other rule sets kept per version


def content_key(real_path: str, data: bytes) -> bytes:
    digest = hashlib.sha256()  # hardware-accelerated: twice blake2b's speed here
    digest.update(real_path.encode("utf-8", "surrogateescape"))
    digest.update(b"\0")
    digest.update(data)
    return digest.digest()[:16]


class FindingsCache:
    def __init__(self, directory: Path, fingerprint: str, *, enabled: bool = True) -> None:
        from portagpu._version import __version__

        self.enabled = enabled
        self.folder = directory / __version__
        self.file = self.folder / f"{fingerprint}.pickle"
        self._old: dict[bytes, tuple[Finding, ...]] = {}
        self._new: dict[bytes, tuple[Finding, ...]] = {}
        self._old_stats: dict[str, tuple[int, int, int, bytes]] = {}
        self._stats: dict[str, tuple[int, int, int, bytes]] = {}
        self._visited: set[str] = set()
        self.hits = 0
        self._now = time.time()
        if enabled:
            self._old, self._old_stats = self._read()

    def _read(self):
        try:
            with open(self.file, "rb") as fh:
                fmt, entries, stats = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError):
            return {}, {}
        if fmt != _FORMAT or not isinstance(entries, dict) or not isinstance(stats, dict):
            return {}, {}
        return entries, stats

    def key_from_stat(self, real_path: str, st: os.stat_result) -> bytes | None:
        """The content key recorded for this exact (mtime, size, inode), if any."""
        if not self.enabled:
            return None
        known = self._old_stats.get(real_path)
        if known is None or known[:3] != (st.st_mtime_ns, st.st_size, st.st_ino):
            return None
        return known[3] if known[3] in self._old else None

    def remember_stat(self, real_path: str, st: os.stat_result, key: bytes) -> None:
        self._visited.add(real_path)
        if self.enabled and self._now - st.st_mtime > _RACY_SECONDS:
            self._stats[real_path] = (st.st_mtime_ns, st.st_size, st.st_ino, key)

    def get(self, key: bytes, shown_path: str) -> list[Finding] | None:
        if not self.enabled:
            return None
        entry = self._old.get(key)
        if entry is None:
            entry = self._new.get(key)
            if entry is None:
                return None
        else:
            self._new[key] = entry
        self.hits += 1
        return [replace(f, path=shown_path) for f in entry]

    def put(self, key: bytes, findings: list[Finding]) -> None:
        if self.enabled:
            self._new[key] = tuple(replace(f, path="") for f in findings)

    def save(self) -> None:
        """This run's entries, plus the old ones of files this run did not
        visit and that still exist (so linting one folder, or pre-commit's
        few files, does not evict the rest); stale versions are dropped."""
        if not self.enabled:
            return
        stats = {
            path: record
            for path, record in self._old_stats.items()
            if path not in self._visited and record[3] in self._old and os.path.exists(path)
        }
        entries = {record[3]: self._old[record[3]] for record in stats.values()}
        entries.update(self._new)
        stats.update(self._stats)
        if entries.keys() == self._old.keys() and stats == self._old_stats:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            top = self.folder.parent
            tag = top / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# portagpu lint cache\n")
                (top / ".gitignore").write_text("# created by portagpu lint\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".pickle")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((_FORMAT, entries, stats), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.file)
            self._prune()
        except OSError:
            pass  # a read-only tree still lints, just without a cache

    def _prune(self) -> None:
        files = sorted(self.folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in files[_KEEP_FILES:]:
            try:
                stale.unlink()
            except OSError:
                pass
