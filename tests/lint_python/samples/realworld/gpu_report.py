"""An environment report in the style of bug-report helpers (own code): the
helper is named for the NVIDIA tool it runs, and no other vendor is handled."""

import subprocess
import sys


def query_nvidia_smi() -> dict:
    out = subprocess.run(  # expect: PG202
        ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv"],
        capture_output=True,
        text=True,
    )
    rows = out.stdout.strip().splitlines()
    return {"rows": rows}


def report() -> None:
    print(sys.version)
    print(query_nvidia_smi())
