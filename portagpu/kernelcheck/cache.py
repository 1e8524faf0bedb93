"""The compile cache: what compiling one specialisation for one target found
(compiled or the error, shared bytes, registers, ...), as a small JSON file.

Keyed by the kernel's source hash, the specialisation, the target and the
compiler's version, so a second run of a test suite compiles nothing. Verdicts
are not stored: they are judged again from these facts and today's limits
table. JSON only, never pickle: a cache file cannot run code. Files are
written atomically; a damaged one is ignored and rewritten.

Location: `--portagpu-kernel-cache`/`--cache-dir`, else $PORTAGPU_CACHE_DIR,
else the platform's user cache folder (~/.cache/portagpu on Linux,
~/Library/Caches/portagpu on macOS, %LOCALAPPDATA%\\portagpu\\Cache on Windows),
each + "/kernelcheck".
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

SCHEMA = 1  # bump when the facts a worker writes change meaning
ENV_CACHE_DIR = "PORTAGPU_CACHE_DIR"


def user_cache_dir() -> Path:
    """portagpu's folder in the platform's user cache location."""
    configured = os.environ.get(ENV_CACHE_DIR)
    if configured:
        return Path(configured).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "portagpu" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "portagpu"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "portagpu"


def default_dir() -> Path:
    return user_cache_dir() / "kernelcheck"


def key_of(*parts: Any) -> str:
    text = json.dumps([SCHEMA, *parts], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class CompileCache:
    """Facts per key under `root/v<SCHEMA>/<2 hex>/<key>.json`."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_dir()
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.root / f"v{SCHEMA}" / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            self.misses += 1
            return None
        if (
            not isinstance(data, dict)
            or data.get("key") != key
            or not isinstance(data.get("facts"), dict)
        ):
            self.misses += 1
            return None
        self.hits += 1
        return data["facts"]

    def put(self, key: str, facts: dict[str, Any]) -> None:
        path = self._path(key)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"key": key, "facts": facts}, fh)
            os.replace(tmp, path)
        except OSError:  # a read-only or full cache costs a recompile next time, nothing more
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
