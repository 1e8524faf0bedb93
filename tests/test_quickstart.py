"""The README's first command ends in examples/quickstart.py: the same user
script, unchanged, must run correctly on this host's device (CPU in CI; the H100
run in benchmarks/results/gpu_suite_h100.log)."""

import os
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
    # the lint and hipify demos ran and found the planted warp-32 reduction
    assert "PG501" in out.stdout and "PG504" in out.stdout
    assert "warp rewrites: 3" in out.stdout
