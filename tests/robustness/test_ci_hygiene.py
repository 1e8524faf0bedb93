"""Issue 13 item 22: `bash .ci/run` leaves no untracked venv in the
checkout, and the pre-commit snippets pin a revision that exists or say how
to pin one."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


def test_ci_venv_lives_outside_the_checkout_or_is_ignored():
    script = (REPO / ".ci" / "run").read_text()
    default = re.search(r"^VENV=\$\{PORTAGPU_CI_VENV:-(.+)\}$", script, re.M)
    assert default, "the venv location is not PORTAGPU_CI_VENV's default any more"
    where = default.group(1)
    assert "mktemp" in where or where.startswith("/"), (
        f"default venv {where!r} is inside the checkout"
    )
    assert re.search(r"\btrap '[^']*rm -rf[^']*' EXIT", script), (
        "the temporary venv is removed when CI ends"
    )
    # and one put in the checkout on purpose (PORTAGPU_CI_VENV=.venv-ci) is ignored by git
    assert _git("check-ignore", "-q", ".venv-ci/bin/python").returncode == 0


def test_pre_commit_rev_exists_or_is_a_documented_placeholder():
    tags = set(_git("tag", "--list").stdout.split())
    for path in (REPO / "docs" / "ci.md", REPO / ".pre-commit-hooks.yaml"):
        for rev in re.findall(r"^[#\s]*rev:\s*(\S+)", path.read_text(), re.M):
            if rev in tags:
                continue
            assert rev.startswith("<") and rev.endswith(">"), (
                f"{path.name}: rev {rev} is no tag of this repository"
            )
    text = " ".join((REPO / "docs" / "ci.md").read_text().split())
    assert "no release is tagged" in text.lower() and "pre-commit autoupdate" in text
