"""Data types shared by the lint engine, the Python checkers and the CUDA analyser.

Positions are 1-based lines and 1-based character columns (as ruff prints
them); end positions are exclusive columns on end_line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
Language = Literal["python", "cuda"]
Target = Literal["rocm", "mps", "cpu"]
Applicability = Literal["safe", "suggestion"]

ALL_TARGETS: tuple[Target, ...] = ("rocm", "mps", "cpu")


@dataclass(frozen=True)
class Example:
    code: str
    note: str = ""
    path: str = ""  # the file name the example is linted as (requirements.txt); "" = by language


@dataclass(frozen=True)
class Rule:
    """One rule of the catalogue, as read from rules/*.yaml."""

    id: str  # e.g. PG101
    name: str  # kebab-case, e.g. torch-cuda-api
    family: str  # file stem it came from
    language: Language
    severity: Severity
    targets: tuple[Target, ...]  # targets on which the idiom breaks
    message: str  # one line; may hold {placeholders} that checkers fill
    why: str  # what breaks, on which vendor
    replacement: str  # the portable way
    fix: Literal["safe", "suggestion", "none"]
    checker: str  # name of the Python checker that implements it
    options: dict[str, Any] = field(default_factory=dict)
    invalid: tuple[Example, ...] = ()  # must trigger
    valid: tuple[Example, ...] = ()  # must not trigger
    source: str = ""  # file the rule was loaded from
    # literal substrings of which at least one must occur in a file's text for
    # the rule to possibly match; the engine's pre-scan skips files with none.
    # Empty means "cannot pre-filter": every file is parsed for this rule.
    tokens: tuple[str, ...] = ()
    # words of which a file must also hold one for the rule to fire (its
    # checker checks that); in any other file the rule is inert and its tokens
    # count for nothing: not in the pre-scan, narrowing nor the walk
    requires: tuple[str, ...] = ()
    # "word": a token counts for the file pre-scan only as a whole word (no
    # letter, digit or `_` before it, no letter or `_` after: `torch.cuda`,
    # `"cuda:0"`, `cupy-cuda12x`, not `is_cuda` or `cudagraphs`) and outside a
    # `#` comment. "substring" (the default): anywhere in the text
    token_match: Literal["substring", "word"] = "substring"
    # the Python sources the rule reads, by file name (fnmatch patterns, e.g.
    # setup.py); empty: every one. Dependency lists are read whatever this says
    only_files: tuple[str, ...] = ()

    def applies_to(self, targets: tuple[str, ...] | list[str]) -> bool:
        return any(t in self.targets for t in targets)


@dataclass(frozen=True)
class Edit:
    """Replace [line:col, end_line:end_col) with content."""

    line: int
    col: int
    end_line: int
    end_col: int
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    message: str
    severity: Severity = "warning"
    fix: Fix | None = None
    # notebooks: (cell number, line, column in that cell); line/col stay positions in the .ipynb text
    cell: tuple[int, int, int] | None = None

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.code)


class ParseFailure(Exception):
    """A checker could not parse the file; the engine reports it as a finding."""

    def __init__(self, message: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


@dataclass(frozen=True)
class LintSettings:
    """What checkers need to know of the user's configuration."""

    targets: tuple[str, ...] = ALL_TARGETS
    # Python calls/attributes whose truth marks a vendor guard (e.g. "is_hip")
    guard_names: tuple[str, ...] = ()
    # preprocessor macros that mark HIP/ROCm-guarded C code (added to the defaults)
    guard_macros: tuple[str, ...] = ()
