"""Reading pyproject.toml's [tool.portagpu] tables (shared by lint, the pytest
plugin and check-kernels); light: tomllib only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from portagpu.errors import ConfigError


def load_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise ConfigError(f"{path}: reading TOML needs Python 3.11+ or `tomli`") from None
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "TOML must be UTF-8"
        ) from None


def portagpu_table(start: Path) -> tuple[dict[str, Any], Path | None]:
    """[tool.portagpu] of the nearest pyproject.toml at or above `start` that has
    one, and that file; ({}, None) when there is none."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            tool = load_toml(candidate).get("tool")
            table = tool.get("portagpu") if isinstance(tool, dict) else None
            if isinstance(table, dict):
                return table, candidate
    return {}, None
