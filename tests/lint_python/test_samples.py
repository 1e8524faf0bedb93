"""A small realistic project: every `# expect: PGxxx` marker is found, nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SAMPLES = sorted((Path(__file__).parent / "samples").rglob("*.py"))
MARK = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def expected(text: str) -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(text.splitlines(), 1):
        match = MARK.search(line)
        if match:
            out |= {(number, code.strip()) for code in match.group(1).split(",") if code.strip()}
    return out


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_findings_match_markers(lint, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = {(f.line, f.code) for f in lint(text, path=str(path.relative_to(path.parents[1])))}
    assert found == expected(text)


def test_samples_cover_every_python_family(rules) -> None:
    marked = set()
    for path in SAMPLES:
        marked |= {code for _, code in expected(path.read_text(encoding="utf-8"))}
    families = {r.family for r in rules if r.id in marked}
    assert families >= {"torch-device", "telemetry", "cupy", "triton"}
