"""All-reduce bus bandwidth through portagpu.distributed vs plain torch.distributed.

    torchrun --nproc-per-node 2 benchmarks/distributed_allreduce.py [--sizes-mib 1,4,16,64,256,1024]

Target (issue 16): identical within noise; portagpu only sets the process group
up, the data path is torch's. In the same processes, interleaved:

* portagpu: torch.distributed.all_reduce on the default group, which
  portagpu.distributed.init() started (rank's device bound, backend for the
  vendor, device_id=);
* torch: the same call on a group made with torch's own API for the same
  backend (torch.distributed.new_group over every rank).

float32 SUM, `--iterations` back-to-back calls per timed batch, `--rounds`
batches per variant with the order flipped every round; each rank's median
per-call time, the slowest rank's reported. Bus bandwidth as nccl-tests
defines it: bytes * 2(n-1)/n / time. Every size is checked for the right sum
through both groups first. Rank 0 prints a table and writes
distributed_allreduce.{json,md} under --out. NCCL's NVLink multicast is
kept off (NCCL_NVLS_ENABLE=0 unless already set).
"""

# ruff: noqa: E402  (NCCL_NVLS_ENABLE must be set before torch starts NCCL)
from __future__ import annotations

import os

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # read when NCCL starts: before init

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

import portagpu
import portagpu.distributed as pgd

RESULTS = Path(__file__).with_name("results")
MIB = 2**20


def synchronize(info: pgd.RankInfo) -> None:
    if info.device.is_gpu:
        torch.accelerator.synchronize()


def timed_batch(buffer: torch.Tensor, group, iterations: int, info: pgd.RankInfo) -> float:
    """Seconds per all-reduce over one batch of back-to-back calls."""
    buffer.fill_(1.0)  # values double each call: stay far from inf
    synchronize(info)
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(iterations):
        dist.all_reduce(buffer, group=group)
    synchronize(info)
    return (time.perf_counter() - start) / iterations


def check_sum(buffer: torch.Tensor, group, info: pgd.RankInfo) -> bool:
    buffer.fill_(float(info.rank + 1))
    dist.all_reduce(buffer, group=group)
    world = info.world_size
    return bool(torch.all(buffer == world * (world + 1) / 2))


def iterations_for(nbytes: int, requested: int | None) -> int:
    if requested:
        return requested
    return 20 if nbytes <= 64 * MIB else 10 if nbytes <= 256 * MIB else 5


def spread(samples: list[float]) -> float:
    """Half the interquartile range, relative to the median."""
    if len(samples) < 4:
        return 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4)
    return (q3 - q1) / 2 / statistics.median(samples)


def slowest(value: float, info: pgd.RankInfo) -> float:
    t = torch.tensor([value], dtype=torch.float64, device=info.torch_device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def measure(size_mib: float, groups: dict, info: pgd.RankInfo, options) -> dict:
    nbytes = int(size_mib * MIB)
    buffer = torch.empty(nbytes // 4, dtype=torch.float32, device=info.torch_device)
    correct = {name: check_sum(buffer, group, info) for name, group in groups.items()}
    iterations = iterations_for(nbytes, options.iterations)
    for group in groups.values():  # warm up: first calls set up channels and buffers
        timed_batch(buffer, group, 2, info)
    samples: dict[str, list[float]] = {name: [] for name in groups}
    names = list(groups)
    for round_ in range(options.rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            samples[name].append(timed_batch(buffer, groups[name], iterations, info))
    factor = 2 * (info.world_size - 1) / info.world_size
    row = {"bytes": nbytes, "iterations": iterations, "rounds": options.rounds}
    seconds_of = {}
    for name in names:
        seconds = seconds_of[name] = slowest(statistics.median(samples[name]), info)
        row[name] = {
            "us": round(seconds * 1e6, 2),
            "busbw_gbs": round(nbytes * factor / seconds / 1e9, 2),
            "spread": round(slowest(spread(samples[name]), info), 4),
            "correct": correct[name],
        }
    ratio = seconds_of["torch"] / seconds_of["portagpu"]  # bandwidth ratio
    noise = max(0.02, row["portagpu"]["spread"] + row["torch"]["spread"])
    row["ratio"] = round(ratio, 4)
    row["within_noise"] = abs(ratio - 1) <= noise
    return row


def nccl_version() -> str:
    version = torch.cuda.nccl.version()
    return ".".join(map(str, version)) if isinstance(version, tuple) else str(version)


def render(result: dict) -> str:
    lines = [
        f"# all-reduce bus bandwidth, {result['world_size']} ranks, {result['devices'][0]}",
        "",
        f"backend {result['backend']} ({result['collective_library']}), torch {result['torch']}, "
        f"NCCL_NVLS_ENABLE={result['NCCL_NVLS_ENABLE']}",
        "",
        "| size | portagpu GB/s | torch GB/s | portagpu/torch | noise (half-IQR, both) | same? |",
        "|---:|---:|---:|---:|---:|:--|",
    ]
    for row in result["sizes"]:
        p, t = row["portagpu"], row["torch"]
        size = f"{row['bytes'] / MIB:g} MiB"
        noise = f"±{100 * (p['spread'] + t['spread']):.1f} %"
        same = "yes" if row["within_noise"] else "NO"
        lines.append(f"| {size} | {p['busbw_gbs']:.1f} | {t['busbw_gbs']:.1f} | "
                     f"{row['ratio']:.3f} | {noise} | {same} |")  # fmt: skip
    wrong = [
        r["bytes"]
        for r in result["sizes"]
        if not (r["portagpu"]["correct"] and r["torch"]["correct"])
    ]
    lines += ["", "sums: " + ("all correct" if not wrong else f"WRONG at {wrong} bytes")]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes-mib", default="1,4,16,64,256,1024",
                        help="comma-separated buffer sizes in MiB (default 1 MiB to 1 GiB)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=None, help="calls per timed batch")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="distributed_allreduce", help="output file stem")
    options = parser.parse_args()
    info = pgd.init()
    groups = {"portagpu": dist.group.WORLD, "torch": dist.new_group(backend=info.backend)}
    devices = [None] * info.world_size
    dist.all_gather_object(devices, f"{info.torch_device} {info.device.name}")
    rows = [measure(float(s), groups, info, options) for s in options.sizes_mib.split(",")]
    result = {
        "world_size": info.world_size,
        "devices": devices,
        "backend": info.backend,
        "collective_library": info.collective_library,
        "torch": torch.__version__,
        "portagpu": portagpu.__version__,
        "nccl": nccl_version() if info.backend == "nccl" else None,  # RCCL's on ROCm
        "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE"),
        "sizes": rows,
        "target": "portagpu/torch bus bandwidth identical within noise at every size",
        "met": all(r["within_noise"] for r in rows),
        "all_sums_correct": all(r[n]["correct"] for r in rows for n in ("portagpu", "torch")),
    }
    dist.destroy_process_group(groups["torch"])
    pgd.shutdown()
    if info.is_main:
        text = render(result)
        print(text)
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / f"{options.name}.json").write_text(json.dumps(result, indent=2) + "\n")
        (options.out / f"{options.name}.md").write_text(text)
    return 0 if result["all_sums_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
