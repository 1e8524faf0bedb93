"""Pool several runs of launch_overhead.py and kernels_bench.py into one table.

    python benchmarks/pool_runs.py RESULTS_DIR --label h200_round3 [--baseline ab_main] [--out FILE.md]

Host-bound timings on the lent GPU machines come in two speeds from round to
round (e.g. one eager call ~7.6 us in some rounds and ~11.5 us in others, in
one process), so a single run's median depends on how many slow rounds it
drew. This pools every round of every run of a label: for kernels_bench rows
the ratio torch / ours of the pooled medians, of the lower quartiles and of
the minima (graph and eager), the median and lower quartile of the per-round
eager ratios (each round times both back to back) and the host extra; for launch_overhead the
median over runs of each target figure. Runs named *_<baseline>_run* (main's
code measured in the same sessions) are pooled apart and shown beside.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def pooled_rows(files: list[Path]) -> dict[tuple[str, str], dict[str, list[float]]]:
    """(kernel, shape) -> every round's samples over `files` (kernels_bench rows with samples)."""
    pools: dict[tuple[str, str], dict[str, list[float]]] = {}
    for path in files:
        for row in json.loads(path.read_text())["rows"]:
            if "samples" not in row:
                continue
            pool = pools.setdefault((row["kernel"], row["shape"]), {})
            for key, values in row["samples"].items():
                pool.setdefault(key, []).extend(values)
    return pools


def row_figures(pool: dict[str, list[float]]) -> dict[str, float]:
    ours, ref = pool["ours_eager"], pool["ref_eager"]
    # each round times ours and torch's back to back: the ratio within a round
    # is taken at one host speed, which the pooled medians are not
    paired = [r / o for r, o in zip(ref, ours, strict=True)]
    return {
        "rounds": len(ours),
        "eager_paired": statistics.median(paired),
        "eager_paired_q25": quantile(paired, 0.25),
        "graph": statistics.median(pool["ref_graph"]) / statistics.median(pool["ours_graph"]),
        "eager": statistics.median(ref) / statistics.median(ours),
        "eager_q25": quantile(ref, 0.25) / quantile(ours, 0.25),
        "eager_min": min(ref) / min(ours),
        "host_extra": statistics.median(pool["ours_host"]) - statistics.median(pool["ref_host"]),
        "host_extra_min": min(pool["ours_host"]) - min(pool["ref_host"]),
    }


def kernels_table(ours: dict, baseline: dict) -> list[str]:
    lines = [
        "| kernel | shape | rounds | graph x | eager x median | eager x q25 | eager x min | eager x paired "
        "(median, q25) | host extra us (median, min) | baseline: eager x median / q25 / min, paired, "
        "host extra |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (kernel, shape), pool in ours.items():
        f = row_figures(pool)
        base = baseline.get((kernel, shape))
        b = row_figures(base) if base else None
        base_text = (
            f"{b['eager']:.2f} / {b['eager_q25']:.2f} / {b['eager_min']:.2f}, "
            f"{b['eager_paired']:.2f} ({b['eager_paired_q25']:.2f}), {b['host_extra']:+.2f}"
            if b
            else ""
        )
        lines.append(
            f"| {kernel} | {shape} | {f['rounds']} | {f['graph']:.2f} | {f['eager']:.2f} | "
            f"{f['eager_q25']:.2f} | {f['eager_min']:.2f} | {f['eager_paired']:.2f}, "
            f"{f['eager_paired_q25']:.2f} | {f['host_extra']:+.2f}, "
            f"{f['host_extra_min']:+.2f} | {base_text} |"
        )
    return lines


def launch_table(ours: list[Path], baseline: list[Path]) -> list[str]:
    def figures(files: list[Path]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for path in files:
            data = json.loads(path.read_text())
            for name, (value, _) in data["targets"].items():
                out.setdefault(name, []).append(value)
            for name, value in data.get("portagpu_own_work_us", {}).items():
                if "no-op" in name:
                    out.setdefault(f"own work: {name}", []).append(value)
        return out

    mine, base = figures(ours), figures(baseline)
    lines = [
        "| figure | runs | median | each run | baseline median | baseline runs |",
        "|---|---:|---:|---|---:|---|",
    ]
    for name, values in mine.items():
        others = base.get(name, [])
        lines.append(
            f"| {name} | {len(values)} | {statistics.median(values):.2f} | "
            f"{', '.join(f'{v:.2f}' for v in values)} | "
            f"{statistics.median(others):.2f} | {', '.join(f'{v:.2f}' for v in others)} |"
            if others
            else f"| {name} | {len(values)} | {statistics.median(values):.2f} | "
            f"{', '.join(f'{v:.2f}' for v in values)} | | |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument(
        "--label", required=True, help="e.g. h200_round3: pools *_<label>_run*.json"
    )
    parser.add_argument(
        "--baseline", default="ab_main", help="runs *_<label>_<baseline>_run* pooled apart"
    )
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    label, base = options.label, f"{options.label}_{options.baseline}"

    def runs(kind: str, name: str) -> list[Path]:
        return sorted(options.results.glob(f"{kind}_{name}_run*.json"))

    lines = [f"# Pooled runs: {label} (baseline: {options.baseline})", ""]
    lines += ["## launch_overhead.py", ""]
    lines += launch_table(runs("launch_overhead", label), runs("launch_overhead", base))
    lines += ["", "## kernels_bench.py (ratios torch / ours; rounds of all runs pooled)", ""]
    lines += kernels_table(
        pooled_rows(runs("kernels_bench", label)), pooled_rows(runs("kernels_bench", base))
    )
    text = "\n".join(lines) + "\n"
    print(text)
    if options.out:
        options.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
