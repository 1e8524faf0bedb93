"""Shared by tests/cuda and tests/hipify (imported by path: no conftest magic)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from portagpu.lint.catalogue import load_file

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpus" / "cuda"
RULE_FILES = (REPO / "rules" / "cuda_warp.yaml", REPO / "rules" / "cuda_libs.yaml")
EXPECT = re.compile(r"expect: ([A-Z0-9 ]+)")


@lru_cache(maxsize=1)
def cuda_catalogue():
    return tuple(rule for path in RULE_FILES for rule in load_file(path))


def expected_findings(text: str) -> set[tuple[int, str]]:
    """(line, code) from `// expect: PG501 PG503` markers in a corpus file."""
    return {
        (number, code)
        for number, line in enumerate(text.splitlines(), start=1)
        for match in EXPECT.finditer(line)
        for code in match.group(1).split()
    }
