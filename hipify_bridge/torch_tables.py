"""PyTorch's hipify tables without importing torch each run.

Importing torch.utils.hipify imports torch (1-3 s) and its regex takes ~0.1 s
to compile. The first run saves the map, keyed by torch's version, as JSON in
the user's cache folder ($XDG_CACHE_HOME/portagpu, else ~/.cache/portagpu);
later runs read it (a few ms) and compile a small regex that renames exactly
as torch's does: a name preceded and followed by a non-word character, the
longest one where several start at the same place. Most names are plain
identifiers, matched as whole words and looked up; the ~200 holding `::`, `.`,
`/` or spaces form the only alternation.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

FORMAT = 2


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "portagpu"


def torch_version() -> str | None:
    """torch's version and a stamp of its hipify tables, without importing torch
    (importlib.metadata scans every installed distribution: ~60 ms)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    package = Path(spec.origin).parent
    try:
        text = (package / "version.py").read_text(encoding="utf-8")
        tables = (package / "utils" / "hipify" / "cuda_to_hip_mappings.py").stat()
    except OSError:
        return None
    match = re.search(r"""__version__\s*=\s*['"]([^'"]+)['"]""", text)
    version = match.group(1) if match else "unknown"
    return f"{version}-{tables.st_size}-{tables.st_mtime_ns}"


def special_names(table: dict[str, str]) -> list[str]:
    """The names that are not plain identifiers, longest first."""
    return sorted((k for k in table if not re.fullmatch(r"\w+", k)), key=len, reverse=True)


def build_pattern(table: dict[str, str], special: list[str] | None = None) -> re.Pattern[str]:
    special = special_names(table) if special is None else special
    alternatives = "|".join(re.escape(k) for k in special)
    return re.compile(
        rf"(?<=\W)(?:{alternatives}|\w+)(?=\W)" if alternatives else r"(?<=\W)\w+(?=\W)"
    )


def _from_torch() -> dict[str, str]:
    from torch.utils.hipify import hipify_python

    return dict(hipify_python.PYTORCH_MAP)


def load(version: str | None = None) -> tuple[re.Pattern[str], dict[str, str]]:
    """(pattern, map): from the cache when it matches torch's version, else from
    torch (and the cache is written for next time; a read-only home is fine)."""
    version = version or torch_version()
    path = cache_dir() / f"hipify-torch-{version.split('-')[0]}.json" if version else None
    if path is not None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") == FORMAT and data.get("torch") == version:
                return build_pattern(data["map"], data["special"]), data["map"]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    table = _from_torch()
    if path is not None:
        try:
            from portagpu.fileio import write_atomic

            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(
                path,
                json.dumps(
                    {
                        "format": FORMAT,
                        "torch": version,
                        "map": table,
                        "special": special_names(table),
                    }
                ).encode("utf-8"),
            )
        except OSError:
            pass
    return build_pattern(table), table
