"""Every rule of the catalogue against its own examples (Fixit's VALID/INVALID):
each `invalid` example must trigger the rule, each `valid` one must not, and
the engine's pre-scan must not skip an invalid example (the rule's `tokens`
cover every way it triggers). Parametrized by rule id so a failure names it."""

from __future__ import annotations

import re

import pytest

from portagpu.lint import meta
from portagpu.lint.catalogue import load_catalogue
from portagpu.lint.engine import PreScan, checker_available, lint_source
from portagpu.lint.model import Example, LintSettings, Rule
from portagpu.lint.source import language_of

CATALOGUE = load_catalogue()
SUFFIX = {"python": ".py", "cuda": ".cu"}


def _cases(kind: str, *, checkers_only: bool = False):
    for rule in CATALOGUE:
        if checkers_only and meta.is_meta(rule):
            continue  # raised by the engine itself, not filtered by tokens
        for index, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.id}-{rule.name}-{kind}{index}")


def _lint(rule: Rule, example: Example) -> list:
    if not meta.is_meta(rule) and not checker_available(rule.language):
        pytest.skip(f"the {rule.language} checkers are not in the tree yet")
    encoding = rule.options.get("example_encoding", "utf-8")
    data = example.code.encode(encoding)
    # the rule's own targets, so a target-dependent rule is exercised where it applies
    settings = LintSettings(targets=rule.targets)
    # an example may say which file it is (requirements.txt, a backend module)
    path = example.path or f"example{SUFFIX[rule.language]}"
    language = language_of(path) or rule.language
    # PG901 comes from the parser; the other meta rules from reading/decoding
    return lint_source(data, path=path, language=language, rules=[rule], settings=settings)


@pytest.mark.parametrize(("rule", "example"), list(_cases("invalid")))
def test_invalid_example_triggers_its_rule(rule: Rule, example: Example) -> None:
    findings = _lint(rule, example)
    codes = [f.code for f in findings]
    assert rule.id in codes, (
        f"{rule.id} ({rule.source}) did not trigger on its invalid example"
        f"{' (' + example.note + ')' if example.note else ''}:\n{example.code}\nfound: {codes}"
    )
    placeholders = re.findall(r"\{[A-Za-z_]\w*\}", rule.message)
    for finding in (f for f in findings if f.code == rule.id):
        assert finding.line >= 1 and finding.col >= 1
        assert (finding.end_line, finding.end_col) >= (finding.line, finding.col)
        unfilled = [p for p in placeholders if p in finding.message]
        assert not unfilled, f"{rule.id}: unfilled {unfilled} in message {finding.message!r}"


@pytest.mark.parametrize(("rule", "example"), list(_cases("valid")))
def test_valid_example_does_not_trigger(rule: Rule, example: Example) -> None:
    findings = [f for f in _lint(rule, example) if f.code == rule.id]
    assert not findings, (
        f"{rule.id} ({rule.source}) fired on its valid example:\n{example.code}\n"
        + "\n".join(f"  {f.line}:{f.col} {f.message}" for f in findings)
    )


@pytest.mark.parametrize(("rule", "example"), list(_cases("invalid", checkers_only=True)))
def test_prescan_keeps_invalid_example(rule: Rule, example: Example) -> None:
    assert rule.tokens, f"{rule.id}: no `tokens`: every file in every run would be parsed for it"
    language = language_of(example.path) if example.path else rule.language
    assert PreScan([rule], language or rule.language).wants(example.code), (
        f"{rule.id}: none of its tokens {list(rule.tokens)} occurs in its invalid example, "
        f"so the pre-scan would skip a file that triggers it:\n{example.code}"
    )


def test_every_rule_has_examples_or_a_dedicated_test() -> None:
    # engine.read / engine.discover / engine.internal cannot be shown as text;
    # tests/lint/test_discovery.py and test_engine.py cover those
    for rule in CATALOGUE:
        if rule.checker in ("engine.read", "engine.discover", "engine.internal"):
            continue
        assert rule.invalid, f"{rule.id}: no invalid example"
        assert rule.valid, f"{rule.id}: no valid example"
