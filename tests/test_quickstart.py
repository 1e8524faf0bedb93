"""The README's first command ends in examples/quickstart.py: the same user
script, unchanged, must run correctly on this host's device (CPU in CI; the H100
run in benchmarks/results/gpu_suite_h100.log)."""

import os
import re
import subprocess
import sys
from pathlib import Path

QUICKSTART = Path(__file__).resolve().parents[1] / "examples" / "quickstart.py"


def test_quickstart_runs_and_every_result_is_correct():
    # a fresh process decides on Triton's interpreter itself, as a user's would
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, str(QUICKSTART)], env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all results correct" in out.stdout
    assert out.stdout.count(" ok") >= 5
    # the lint demo linted its file (the repo's config excludes the folder; named
    # on the command line it is linted anyway) and printed what it found
    lint = out.stdout.split("$ portagpu lint", 1)[1].split("$ portagpu hipify", 1)[0]
    found = {f"{m[1]}:{m[2]}" for m in re.finditer(r"^examples/legacy_app/train\.py:(\d+):\d+: (PG\d+)", lint, re.M)}
    assert {"7:PG201", "17:PG501", "18:PG504", "31:PG202", "35:PG102", "43:PG101"} <= found
    assert "in 1 file(s)" in lint
    # and hipify translated the planted warp-32 reduction
    assert "warp rewrites: 3" in out.stdout
