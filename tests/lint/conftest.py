"""A toy rule family (TX1xx) and a tiny checker for it, so the engine's tests
do not depend on the real Python/CUDA checkers (written in parallel)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from portagpu.lint import dispatch
from portagpu.lint.config import LintConfig
from portagpu.lint.model import Edit, Finding, Fix, ParseFailure

TOY_RULES = textwrap.dedent(
    """
    family: toy
    language: python
    rules:
      - id: TX101
        name: toy-cuda-sync
        severity: warning
        targets: [mps, cpu]
        message: "`{call}` is CUDA-only"
        why: toy rule for the engine's tests
        replacement: accel_sync()
        fix: safe
        checker: toy
        tokens: ["cuda_sync"]
        options: {pattern: "cuda_sync()", replace: "accel_sync()"}
        examples: {invalid: ["cuda_sync()"], valid: ["accel_sync()"]}
      - id: TX102
        name: toy-warp32
        severity: error
        targets: [rocm]
        message: "`{call}` assumes 32 lanes"
        why: toy rule for the engine's tests
        replacement: warp_size()
        fix: suggestion
        checker: toy
        tokens: ["warp32"]
        options: {pattern: "warp32", replace: "warp_size()"}
        examples: {invalid: ["n = warp32"], valid: ["n = warp_size()"]}
      - id: TX103
        name: toy-bad-fix
        severity: warning
        targets: [rocm, mps, cpu]
        message: "`{call}` has a broken fix"
        why: toy rule whose fix does not parse
        replacement: none
        fix: safe
        checker: toy
        tokens: ["bad_fix"]
        options: {pattern: "bad_fix()", replace: "bad_fix(("}
        examples: {invalid: ["bad_fix()"], valid: ["good()"]}
      - id: TX104
        name: toy-crash
        severity: warning
        targets: [rocm, mps, cpu]
        message: "never shown"
        why: toy rule whose checker raises
        replacement: none
        fix: none
        checker: toy
        tokens: ["explode_here"]
        options: {crash: true}
        examples: {invalid: ["explode_here"], valid: ["x"]}
    """
)

CALLS: list[str] = []  # paths the toy checker was asked to check (this process)


def toy_check(path, text, rules, settings):
    CALLS.append(path)
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise ParseFailure(exc.msg, exc.lineno or 1, exc.offset or 1) from None
    findings = []
    lines = text.splitlines()
    for rule in rules:
        if rule.options.get("crash") and "explode_here" in text:
            raise RuntimeError("toy checker exploded")
        pattern = rule.options.get("pattern")
        if not pattern:
            continue
        for number, line in enumerate(lines, 1):
            start = line.find(pattern)
            while start >= 0:
                col, end = start + 1, start + 1 + len(pattern)
                fix = Fix(
                    "safe" if rule.fix == "safe" else "suggestion",
                    f"replace with `{rule.options['replace']}`",
                    (Edit(number, col, number, end, rule.options["replace"]),),
                )
                findings.append(
                    Finding(path, number, col, number, end, rule.id, rule.message.format(call=pattern), rule.severity, fix)
                )
                start = line.find(pattern, start + len(pattern))
    return findings


def _fake_checker(language):
    return toy_check if language == "python" else None


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Returns a LintConfig factory over the toy rules, rooted at tmp_path."""
    rules_file = tmp_path / "toy_rules.yaml"
    rules_file.write_text(TOY_RULES)
    monkeypatch.setattr(dispatch, "_checker", _fake_checker)
    monkeypatch.chdir(tmp_path)
    CALLS.clear()

    def make(**overrides) -> LintConfig:  # toy.calls: paths the checker saw
        base = dict(
            root=tmp_path,
            select=("TX", "PG9"),
            extend_rules=(str(rules_file),),
            jobs=1,
        )
        base.update(overrides)
        return LintConfig(**base)

    make.calls = CALLS  # type: ignore[attr-defined]
    return make
