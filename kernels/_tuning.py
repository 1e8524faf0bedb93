"""Launch parameters from kernels/tuning.yaml (package data): per kernel, vendor, size.

The table is data so that retuning for a new GPU is an edit to one file, never a
hunt for constants. Loaded once, on first use, and checked as it is loaded.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from portagpu.errors import ConfigError

TABLE = "tuning.yaml"
IMPLS = ("triton", "cuda", "torch")
DEFAULT = "default"  # the rows of a vendor the table has none for


def vendors() -> tuple[str, ...]:
    """The row keys a kernel entry may have: each registered backend's vendor."""
    from portagpu.backends import all_backends

    return (*dict.fromkeys(b.vendor for b in all_backends()), DEFAULT)


@cache
def table() -> dict[str, Any]:
    import yaml

    path = resources.files("portagpu.kernels") / TABLE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not valid YAML: {exc}") from None
    kernels = (data or {}).get("kernels")
    if not isinstance(kernels, dict):
        raise ConfigError(f"{path}: no `kernels:` mapping")
    for name, entry in kernels.items():
        _check_entry(path, name, entry)
    return kernels


def _check_entry(path: object, name: str, entry: Any) -> None:
    if not isinstance(entry, dict) or DEFAULT not in entry:
        raise ConfigError(f"{path}: kernel {name!r} needs a `default` list of rows")
    for vendor, impl in (entry.get("impl") or {}).items():
        if impl not in IMPLS:
            raise ConfigError(f"{path}: {name}.impl.{vendor} = {impl!r}; use one of {IMPLS}")
    for vendor in vendors():
        rows = entry.get(vendor)
        if rows is None:
            continue
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
            raise ConfigError(f"{path}: {name}.{vendor} must be a non-empty list of mappings")
        if "upto" in rows[-1]:
            raise ConfigError(f"{path}: {name}.{vendor}: the last row must have no `upto`")


def config(kernel: str, vendor: str, size: int) -> dict[str, Any]:
    """The first row for `vendor` (else `default`) whose `upto` covers `size`."""
    entry = table()[kernel]
    rows = entry.get(vendor) or entry[DEFAULT]
    for row in rows:
        if size <= row.get("upto", size):
            return {k: v for k, v in row.items() if k != "upto"}
    raise AssertionError("unreachable: the last row has no upto")  # pragma: no cover


def default_impl(kernel: str, vendor: str) -> str:
    return (table()[kernel].get("impl") or {}).get(vendor, "torch")
