"""The engine's own diagnostics (PG9xx, rules/meta.yaml): one per file that
cannot be read, decoded, parsed or checked, so the run continues."""

from __future__ import annotations

from portagpu.lint.model import Finding, Rule

SYNTAX_ERROR = "PG901"
UNREADABLE = "PG902"
NOT_UTF8 = "PG903"
NUL_BYTES = "PG904"
TOO_LARGE = "PG905"
SYMLINK_LOOP = "PG906"
INTERNAL_ERROR = "PG907"

META_CODES = frozenset(
    {SYNTAX_ERROR, UNREADABLE, NOT_UTF8, NUL_BYTES, TOO_LARGE, SYMLINK_LOOP, INTERNAL_ERROR}
)
DEFAULT_MAX_BYTES = 10 * 1024 * 1024

# one-line fallbacks used when the rule itself is not loaded (e.g. deselected)
_FALLBACK = {
    SYNTAX_ERROR: "cannot parse: {detail}",
    UNREADABLE: "cannot read file: {detail}",
    NOT_UTF8: "cannot decode file as UTF-8 (or its PEP 263 coding): {detail}",
    NUL_BYTES: "file contains NUL bytes (binary?): {detail}",
    TOO_LARGE: "file is too large to lint: {detail}",
    SYMLINK_LOOP: "symlink loop: {detail}",
    INTERNAL_ERROR: "internal error while checking this file: {detail}",
}


def is_meta(rule: Rule) -> bool:
    """Rules implemented by the engine itself rather than by a checker."""
    return rule.checker.startswith("engine.")


def meta_finding(
    code: str,
    path: str,
    detail: str,
    *,
    line: int = 1,
    col: int = 1,
    rules: dict[str, Rule] | None = None,
) -> Finding:
    rule = (rules or {}).get(code)
    template = rule.message if rule else _FALLBACK[code]
    try:
        message = template.format(detail=detail)
    except (KeyError, IndexError, ValueError):
        message = f"{template}: {detail}"
    severity = rule.severity if rule else ("warning" if code == TOO_LARGE else "error")
    line, col = max(1, line), max(1, col)
    return Finding(path, line, col, line, col + 1, code, message, severity=severity)
