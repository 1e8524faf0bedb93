"""examples/multi_gpu.py and benchmarks/distributed_allreduce.py under
`torchrun --nproc-per-node 2` on this host's CPU (gloo), as the two-GPU run
starts them, so they work the first time there. The GPU results are in
benchmarks/results/ (docs/distributed.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def torchrun(script: str, *args: str, nproc: int = 2) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PORTAGPU_DEVICE="cpu", OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
               str(ROOT / script), *args]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def test_multi_gpu_example_on_two_cpu_ranks():
    out = torchrun("examples/multi_gpu.py")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    for rank in (0, 1):
        assert any(
            line.startswith(f"rank {rank}/2 (local {rank}) on cpu")
            and "via gloo (Gloo)" in line
            and "kernel ok, all-reduce ok" in line
            for line in lines
        ), out.stdout
    assert lines[-1] == "OK"


def test_allreduce_benchmark_on_two_cpu_ranks(tmp_path):
    out = torchrun("benchmarks/distributed_allreduce.py", "--sizes-mib", "0.25,1", "--rounds", "4",
                   "--iterations", "3", "--out", str(tmp_path))  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads((tmp_path / "distributed_allreduce.json").read_text())
    assert (result["world_size"], result["backend"], result["NCCL_NVLS_ENABLE"]) == (2, "gloo", "0")
    assert [row["bytes"] for row in result["sizes"]] == [2**18, 2**20]
    assert result["all_sums_correct"]
    for row in result["sizes"]:
        assert row["portagpu"]["busbw_gbs"] > 0 and row["torch"]["busbw_gbs"] > 0
    assert "| 1 MiB |" in (tmp_path / "distributed_allreduce.md").read_text()
