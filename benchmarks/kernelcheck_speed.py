"""How much does the compile check cost?

1. Compile time per kernel x target, cold and cached: one specialisation of each
   of portagpu's Triton kernels (the first tuning row each launches on its vendor),
   compiled for gfx942, gfx90a, gfx1100, sm_90 and sm_80 with an empty compile
   cache and an empty Triton cache (cold), then checked again (cached).
2. What the cached check adds to portagpu's own test suite: the suite without the
   option, and with `--portagpu-compile-for <targets>` once to fill the cache (the
   cold cost, reported), then alternating rounds without and with the option (warm
   cache); the overhead is the median of the per-round ratios. Target: < 5%.

    python benchmarks/kernelcheck_speed.py [--suite tests/kernels] [--rounds 2] [-j 2]

Other jobs may share the cores (this machine has 2 for up to 8 helpers): rounds
alternate and ratios are per round. Prints a table and writes
benchmarks/results/kernelcheck_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "kernelcheck_speed.json"
TARGETS = "gfx942,gfx90a,gfx1100,sm_90,sm_80"


def compile_times(targets: str, workers: int) -> dict:
    from portagpu.kernelcheck.builtin import record_rows
    from portagpu.kernelcheck.cache import CompileCache
    from portagpu.kernelcheck.check import check_specs
    from portagpu.kernelcheck.targets import parse_targets

    rows = []
    totals = {"cold_s": 0.0, "cached_s": 0.0, "checks": 0}
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        os.environ["TRITON_CACHE_DIR"] = str(
            Path(tmp) / "triton"
        )  # the workers' Triton cache: empty
        cache = CompileCache(Path(tmp) / "kernelcheck")
        for target in parse_targets(targets):
            specs, _, _ = record_rows(target)
            first = {}
            for spec in specs:  # one specialisation per kernel: its first row's launch
                first.setdefault(spec.kernel.short, spec)
            chosen = list(first.values())
            start = time.perf_counter()
            cold = check_specs(chosen, [target], cache=cache, workers=workers)
            cold_wall = time.perf_counter() - start
            start = time.perf_counter()
            warm = check_specs(chosen, [target], cache=cache, workers=workers)
            warm_wall = time.perf_counter() - start
            assert warm.summary()["compiled"] == 0, "the second check must come from the cache"
            for check, again in zip(cold.checks, warm.checks, strict=True):
                rows.append(
                    {
                        "kernel": check.name,
                        "target": target.name,
                        "status": check.status,
                        "cold_compile_s": round(check.seconds, 3),
                        "verdict_same": check.status == again.status,
                    }
                )
            totals["cold_s"] += cold_wall
            totals["cached_s"] += warm_wall
            totals["checks"] += len(cold.checks)
        os.environ.pop("TRITON_CACHE_DIR", None)
    return {"rows": rows, **totals}


def run_suite(suite: str, extra: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", suite, "-q", "-p", "no:cacheprovider", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    last = [line for line in proc.stdout.splitlines() if line.strip()][-1:] or [""]
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"kernelcheck_speed: {suite} {' '.join(extra)} exited {proc.returncode}: {last[0]}"
        )
    return elapsed, last[0]


def suite_overhead(suite: str, targets: str, rounds: int) -> dict:
    """A/B wall times (noisy on a shared machine) and, from each run with the option, the
    seconds the plugin itself measured (start, recording, checking): the direct figure."""
    with tempfile.TemporaryDirectory(prefix="kc-suite-") as tmp:
        env = dict(os.environ, TRITON_CACHE_DIR=str(Path(tmp) / "triton"))
        report_path = Path(tmp) / "r.json"
        option = [
            "--portagpu-compile-for",
            targets,
            "--portagpu-kernel-cache",
            str(Path(tmp) / "kc"),
            "--portagpu-compile-on-failure",
            "warn",
            "--portagpu-compile-report",
            str(report_path),
        ]

        def with_option() -> tuple[float, str, dict]:
            report_path.unlink(missing_ok=True)
            elapsed, summary = run_suite(suite, option, env)
            if not report_path.is_file():
                raise SystemExit(
                    f"kernelcheck_speed: the run with the option wrote no report ({summary})"
                )
            return elapsed, summary, json.loads(report_path.read_text())

        baseline0, summary = run_suite(suite, [], env)
        cold, cold_summary, cold_report = with_option()
        pairs, spent = [], []
        for _ in range(rounds):
            off, _ = run_suite(suite, [], env)
            on, _, report = with_option()
            pairs.append((off, on))
            spent.append(report["session_seconds"])
    ratios = [on / off for off, on in pairs]
    baseline = statistics.median([off for off, _ in pairs])
    inproc = [sum(s.values()) for s in spent]
    return {
        "suite": suite,
        "targets": targets,
        "tests": summary,
        "baseline_first_s": round(baseline0, 2),
        "with_option_cold_s": round(cold, 2),
        "cold_summary": cold_summary,
        "cold_session_seconds": cold_report["session_seconds"],
        "specialisations_checked": cold_report["summary"],
        "rounds": [
            {"without_s": round(a, 2), "with_cached_s": round(b, 2), "plugin_measured_s": s}
            for (a, b), s in zip(pairs, spent, strict=True)
        ],
        "overhead_ab_median_pct": round((statistics.median(ratios) - 1) * 100, 2),
        "overhead_measured_pct": round(statistics.median(inproc) / baseline * 100, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--targets", default=TARGETS)
    parser.add_argument(
        "--suite", default="tests", help="pytest paths for the overhead part (default: tests)"
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--skip-suite", action="store_true")
    args = parser.parse_args()

    compiles = compile_times(args.targets, args.jobs)
    print(f"{'kernel':28} {'target':8} {'status':12} cold compile s")
    for row in compiles["rows"]:
        print(
            f"{row['kernel']:28} {row['target']:8} {row['status']:12} {row['cold_compile_s']:.2f}"
        )
    per_cold = compiles["cold_s"] / compiles["checks"]
    per_cached = compiles["cached_s"] / compiles["checks"] * 1000
    print(
        f"{compiles['checks']} kernel x target checks: cold {compiles['cold_s']:.1f} s wall "
        f"({per_cold:.2f} s each, {args.jobs} processes); cached {compiles['cached_s'] * 1000:.1f} ms "
        f"({per_cached:.2f} ms each)"
    )
    result = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_avg_start": os.getloadavg(),
        },
        "triton": __import__("portagpu.kernelcheck.toolchain", fromlist=["x"]).toolchain().triton,
        "compile": compiles,
    }
    if not args.skip_suite:
        overhead = suite_overhead(args.suite, args.targets, args.rounds)
        result["suite"] = overhead
        for i, r in enumerate(overhead["rounds"], 1):
            print(
                f"suite round {i}: without {r['without_s']:.1f} s, with the cached check "
                f"{r['with_cached_s']:.1f} s; the plugin measured {r['plugin_measured_s']}"
            )
        print(
            f"suite {args.suite}: {overhead['tests']}; first run with the option (cold compile): "
            f"{overhead['with_option_cold_s']:.1f} s; cached: the plugin's own time is "
            f"{overhead['overhead_measured_pct']:.1f}% of the suite (A/B wall-time median "
            f"{overhead['overhead_ab_median_pct']:+.1f}%; target < 5%)"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
