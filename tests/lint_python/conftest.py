from __future__ import annotations

import pytest

from portagpu.lint.catalogue import load_catalogue
from portagpu.lint.model import LintSettings
from portagpu.lint.python import check_python

PY_FAMILIES = ("torch-device", "telemetry", "cupy", "nvidia-python-toolkits", "triton", "dependencies", "distributed")


def python_rules():
    return [r for r in load_catalogue() if r.family in PY_FAMILIES]


@pytest.fixture(scope="session")
def rules():
    return python_rules()


@pytest.fixture
def lint(rules):
    def run(text: str, *, path: str = "mod.py", select: tuple[str, ...] = (), **settings):
        chosen = [r for r in rules if not select or r.id in select]
        return check_python(path, text, chosen, LintSettings(**settings))

    return run
