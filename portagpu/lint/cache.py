"""Findings cached by file content, so an unchanged tree re-lints at once.

One JSON file per (portagpu version, rule set + settings + checker code)
under `.portagpu_cache/`; entries are keyed by a hash of the file's real path
and bytes. A stat index (mtime_ns, size, inode -> that hash) lets an unchanged
file skip even the read, as ruff's cache does; a file modified within the
last two seconds is not indexed (its mtime may not yet tell edits apart).

The cache lives in the linted tree, so anyone who can write there can plant
one: it is plain data (never pickle, which runs code when read), checked
for its format version and shape; a file that fails is named in a warning
and ignored. Written atomically."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from portagpu.lint import dependencies
from portagpu.lint.dependencies import Dependency
from portagpu.lint.model import Edit, Finding, Fix

_FORMAT = 4  # 2 was a pickle; 4 added the other files an entry depends on
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
        self.file = self.folder / f"{fingerprint}.json"
        self._old: dict[bytes, tuple[Finding, ...]] = {}
        self._new: dict[bytes, tuple[Finding, ...]] = {}
        # key -> the other files its findings depend on (dependencies.py)
        self._old_deps: dict[bytes, tuple[Dependency, ...]] = {}
        self._new_deps: dict[bytes, tuple[Dependency, ...]] = {}
        self._old_stats: dict[str, tuple[int, int, int, bytes]] = {}
        self._stats: dict[str, tuple[int, int, int, bytes]] = {}
        self._visited: set[str] = set()
        self.hits = 0
        self.warnings: list[str] = []  # cache files that were ignored, and why
        self._now = time.time()
        if enabled:
            self._old, self._old_stats, self._old_deps = self._read()

    def _read(self):
        try:
            with open(self.file, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            return {}, {}, {}
        except OSError as exc:
            self.warnings.append(
                f"{self.file}: cannot read the lint cache ({exc.strerror}); ignored"
            )
            return {}, {}, {}
        try:
            return decode(json.loads(raw))
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            self.warnings.append(
                f"{self.file}: not a portagpu {_FORMAT} lint cache ({exc}); ignored"
            )
            return {}, {}, {}

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
        """The findings of an unchanged file, unless another file they
        depend on (a guard flag's module) has changed since."""
        if not self.enabled:
            return None
        entry = self._old.get(key)
        if entry is None:
            entry = self._new.get(key)
            if entry is None or not dependencies.unchanged(self._new_deps.get(key, ())):
                return None
        else:
            deps = self._old_deps.get(key, ())
            if not dependencies.unchanged(deps):
                return None
            self._new[key] = entry
            if deps:
                self._new_deps[key] = deps
        self.hits += 1
        return [replace(f, path=shown_path) for f in entry]

    def put(self, key: bytes, findings: list[Finding], depends_on: tuple[Dependency, ...] = ()) -> None:
        if self.enabled:
            self._new[key] = tuple(replace(f, path="") for f in findings)
            if depends_on:
                self._new_deps[key] = depends_on
            else:
                self._new_deps.pop(key, None)

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
        deps = {key: self._old_deps[key] for key in entries if key in self._old_deps}
        entries.update(self._new)
        deps.update(self._new_deps)
        stats.update(self._stats)
        if entries.keys() == self._old.keys() and stats == self._old_stats and deps == self._old_deps:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            top = self.folder.parent
            tag = top / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text(
                    "Signature: 8a477f597d28d172789f06886806bc55\n# portagpu lint cache\n"
                )
                (top / ".gitignore").write_text("# created by portagpu lint\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                # dumps, not dump: dump streams through the pure-Python encoder (~5x slower)
                fh.write(json.dumps(encode(entries, stats, deps), separators=(",", ":")))
            os.replace(tmp, self.file)
            self._prune()
        except OSError:
            pass  # a read-only tree still lints, just without a cache

    def _prune(self) -> None:
        files = [p for p in self.folder.glob("*.json") if not p.name.startswith("rules-")]
        files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in files[_KEEP_FILES:]:
            try:
                stale.unlink()
            except OSError:
                pass


# --- the file format: plain JSON, every field checked on the way in ---------------


def encode(
    entries: dict[bytes, tuple[Finding, ...]],
    stats: dict[str, tuple[int, int, int, bytes]],
    deps: dict[bytes, tuple[Dependency, ...]] | None = None,
) -> dict:
    return {
        "format": _FORMAT,
        "entries": {key.hex(): [_finding_out(f) for f in found] for key, found in entries.items()},
        "stats": {path: [m, size, ino, key.hex()] for path, (m, size, ino, key) in stats.items()},
        "deps": {key.hex(): [list(d) for d in found] for key, found in (deps or {}).items() if key in entries},
    }


def decode(
    data: object,
) -> tuple[
    dict[bytes, tuple[Finding, ...]],
    dict[str, tuple[int, int, int, bytes]],
    dict[bytes, tuple[Dependency, ...]],
]:
    """Raises ValueError/TypeError/KeyError/IndexError on anything else."""
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise ValueError(
            f"format {data.get('format') if isinstance(data, dict) else type(data).__name__!r}"
        )
    raw_entries, raw_stats, raw_deps = data["entries"], data["stats"], data["deps"]
    if not isinstance(raw_entries, dict) or not isinstance(raw_stats, dict) or not isinstance(raw_deps, dict):
        raise TypeError("entries, stats and deps must be tables")
    entries = {
        bytes.fromhex(key): tuple(_finding_in(f) for f in _list(found))
        for key, found in raw_entries.items()
    }
    stats = {}
    for path, record in raw_stats.items():
        mtime, size, ino, key = _list(record, 4)
        stats[_str(path)] = (_int(mtime), _int(size), _int(ino), bytes.fromhex(_str(key)))
    deps = {}
    for key, found in raw_deps.items():
        deps[bytes.fromhex(key)] = tuple(
            (_str(path), _int(mtime), _int(size)) for path, mtime, size in (_list(d, 3) for d in _list(found))
        )
    return entries, stats, deps


def _finding_out(f: Finding) -> list:
    fix = None
    if f.fix is not None:
        edits = [[e.line, e.col, e.end_line, e.end_col, e.content] for e in f.fix.edits]
        fix = [f.fix.applicability, f.fix.message, edits]
    return [f.line, f.col, f.end_line, f.end_col, f.code, f.message, f.severity, fix]


def _finding_in(raw: object) -> Finding:
    line, col, end_line, end_col, code, message, severity, fix = _list(raw, 8)
    if severity not in ("error", "warning", "info"):
        raise ValueError(f"severity {severity!r}")
    parsed = None
    if fix is not None:
        applicability, fix_message, edits = _list(fix, 3)
        if applicability not in ("safe", "suggestion"):
            raise ValueError(f"applicability {applicability!r}")
        parsed = Fix(applicability, _str(fix_message), tuple(_edit_in(e) for e in _list(edits)))
    return Finding(
        "",
        _int(line),
        _int(col),
        _int(end_line),
        _int(end_col),
        _str(code),
        _str(message),
        severity,
        parsed,
    )


def _edit_in(raw: object) -> Edit:
    line, col, end_line, end_col, content = _list(raw, 5)
    return Edit(_int(line), _int(col), _int(end_line), _int(end_col), _str(content))


def _list(value: object, length: int | None = None) -> list:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise TypeError(
            f"expected a list{f' of {length}' if length else ''}, got {type(value).__name__}"
        )
    return value


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value
