"""The same user script (portable_script.py) runs unchanged on this host's device."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("portable_script.py")


def test_portable_script_runs_correctly():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WRONG" not in result.stdout
    assert result.stdout.count(": ok") == 3
