"""Every rule whose fix is `safe`, on its own invalid examples: `--fix` leaves
code that parses, fixes what it reports as fixed, and a second `--fix`
changes nothing."""

from __future__ import annotations

import ast

import pytest

from portagpu.lint import meta
from portagpu.lint.catalogue import load_catalogue
from portagpu.lint.config import LintConfig
from portagpu.lint.engine import checker_available, lint_paths

SAFE = [r for r in load_catalogue() if r.fix == "safe" and not meta.is_meta(r)]
SUFFIX = {"python": ".py", "cuda": ".cu"}


@pytest.mark.parametrize("rule", SAFE, ids=[r.id for r in SAFE])
def test_safe_fix_is_stable(rule, tmp_path, monkeypatch):
    if not checker_available(rule.language):
        pytest.skip(f"the {rule.language} checkers are not in the tree yet")
    monkeypatch.chdir(tmp_path)
    config = LintConfig(root=tmp_path, select=(rule.id,), targets=rule.targets, cache=False, jobs=1)
    fixed_any = False
    for index, example in enumerate(rule.invalid):
        path = tmp_path / f"ex{index}" / (example.path or f"ex{SUFFIX[rule.language]}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(example.code)
        first = lint_paths([path], config, fix=True)
        assert not first.errors, first.errors
        after = path.read_text()
        if path.suffix == ".py":
            ast.parse(after)
        if first.fixed:
            fixed_any = True
            assert after != example.code
        second = lint_paths([path], config, fix=True)
        assert second.fixed == 0 and second.changed == {}, f"{rule.id}: second --fix changed {path.name}"
        assert path.read_text() == after
    assert fixed_any, f"{rule.id} says its fix is safe, but no invalid example got fixed"
