"""How fast is `portagpu lint` on a big real tree, next to ruff, in one run?

Corpus: the Python sources of the installed torch package (plus triton's if
present), which every machine with the dev extras has. Measures, each in its
own process so peak RSS is that command's (and its workers'):

  * ruff check --no-cache with this ruff's default rules (the reference), and
    with the classic default selection E4,E7,E9,F for comparison;
  * portagpu lint, cold: an empty cache (it is written during the run);
  * portagpu lint, warm: the same tree again, unchanged.

Targets (issue 3): cold <= 3x ruff's default time, warm <= 0.5 s, peak RSS
<= 1 GiB. Prints a table and writes benchmarks/results/lint_speed.json.

    python benchmarks/lint_speed.py [--rounds 3] [--repeat-warm 5] [-j N] [--tree PATH ...]

`--tree PATH` (repeatable) lints those folders instead, e.g. a GPU-heavy tree
of real projects kept outside the repo; its results go to
benchmarks/results/lint_speed_tree.json.

Other jobs may share the cores: ruff and the cold run alternate, and the
cold ratio is the median of the per-round ratios. portagpu is byte-compiled
first, as `pip install` leaves it (an editable checkout under
PYTHONDONTWRITEBYTECODE=1 would compile its modules in every run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "lint_speed.json"
TREE_RESULTS = RESULTS.with_name("lint_speed_tree.json")
GIB = 1024**3


def corpus() -> list[str]:
    roots = []
    for name in ("torch", "triton"):
        try:
            module = __import__(name)
        except Exception:  # noqa: BLE001 - a missing or broken install just shrinks the corpus
            continue
        roots.append(str(Path(module.__file__).parent))
    if not roots:
        sys.exit("lint_speed: neither torch nor triton is installed; nothing to lint")
    return roots


def count_files(roots: list[str]) -> int:
    return sum(1 for r in roots for p in Path(r).rglob("*") if p.suffix in (".py", ".pyi", ".cu", ".cuh"))


def measure(cmd: list[str], cwd: str) -> dict:
    """Runs cmd in a fresh helper process, which reports wall time and the
    peak RSS of cmd and its children (RUSAGE_CHILDREN is per process)."""
    helper = [sys.executable, __file__, "--measure-one", cwd, "--", *cmd]
    out = subprocess.run(helper, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _measure_one(cwd: str, cmd: list[str]) -> None:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - start
    rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    print(json.dumps({"wall_s": wall, "peak_rss_bytes": rss_kib * 1024, "rc": proc.returncode,
                      "stdout_tail": proc.stdout[-4000:].decode(errors="replace"),
                      "stderr_tail": proc.stderr[-2000:].decode(errors="replace")}))


def run_series(label: str, cmd: list[str], cwd: str, repeat: int) -> dict:
    return _summarise(label, cmd, [measure(cmd, cwd) for _ in range(repeat)])


def _summarise(label: str, cmd: list[str], runs: list[dict]) -> dict:
    walls = [r["wall_s"] for r in runs]
    return {
        "label": label,
        "command": " ".join(cmd),
        "walls_s": walls,
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "peak_rss_bytes": max(r["peak_rss_bytes"] for r in runs),
        "rc": runs[-1]["rc"],
        "last": runs[-1],
    }


def _compile_portagpu() -> None:
    """Byte-compile portagpu as `pip install` does: an editable checkout run
    with PYTHONDONTWRITEBYTECODE=1 (this machine's default) would otherwise
    compile every module it imports from source in every timed process."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("portagpu")
    if spec is not None and spec.origin:
        compileall.compile_dir(str(Path(spec.origin).parent), quiet=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of ruff + cold portagpu, alternating")
    parser.add_argument("--repeat-warm", type=int, default=5)
    parser.add_argument("-j", "--jobs", type=int, default=None, help="portagpu workers (default: every core)")
    parser.add_argument("--tree", action="append", metavar="PATH",
                        help="lint this folder instead of torch and triton (repeatable)")
    args = parser.parse_args()

    _compile_portagpu()
    roots = [str(Path(p).resolve()) for p in args.tree] if args.tree else corpus()
    results = TREE_RESULTS if args.tree else RESULTS
    files = count_files(roots)
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    portagpu = [sys.executable, "-m", "portagpu"]
    work = tempfile.mkdtemp(prefix="lint_speed_")
    # an empty [tool.portagpu.lint] here roots the config and the cache in `work`
    pyproject = Path(work) / "pyproject.toml"
    pyproject.write_text("[tool.portagpu.lint]\n")
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    lint = [*portagpu, "lint", *roots, "--config", str(pyproject), *jobs, "--exit-zero"]

    def clear_cache() -> None:
        shutil.rmtree(Path(work) / ".portagpu_cache", ignore_errors=True)

    # ruff and the cold run alternate, so that both see the same machine load
    # (other jobs share these cores); the ratio is taken per round
    ruff_default = [ruff, "check", "--isolated", "--no-cache", "--exit-zero", "-q", *roots]
    ruff_classic = [*ruff_default, "--select", "E4,E7,E9,F"]
    rounds = args.rounds
    runs: dict[str, list[dict]] = {"ruff (default rules)": [], "ruff (E4,E7,E9,F)": [], "portagpu lint, cold": []}
    for _ in range(rounds):
        runs["ruff (default rules)"].append(measure(ruff_default, work))
        runs["ruff (E4,E7,E9,F)"].append(measure(ruff_classic, work))
        clear_cache()
        runs["portagpu lint, cold"].append(measure([*lint, "-q"], work))
    commands = {"ruff (default rules)": ruff_default, "ruff (E4,E7,E9,F)": ruff_classic, "portagpu lint, cold": [*lint, "-q"]}
    series = [_summarise(label, commands[label], results) for label, results in runs.items()]
    def ratios(reference: str) -> list[float]:
        pairs = zip(runs["portagpu lint, cold"], runs[reference], strict=True)
        return [c["wall_s"] / r["wall_s"] for c, r in pairs]

    per_round = ratios("ruff (default rules)")
    # the cache is now warm from the last cold run
    inventory_file = Path(work) / "inventory.json"
    warm_cmd = [*lint, "--statistics", "--format", "json", "-o", str(inventory_file)]
    series.append(run_series("portagpu lint, warm", warm_cmd, work, args.repeat_warm))
    inventory = json.loads(inventory_file.read_text()) if inventory_file.exists() else None
    shutil.rmtree(work, ignore_errors=True)

    ruff_median = series[0]["median_s"]
    cold, warm = series[2], series[3]
    peak = max(cold["peak_rss_bytes"], warm["peak_rss_bytes"])
    ratio = statistics.median(per_round)
    checks = {
        "cold <= 3x ruff (default rules), median of per-round ratios": ratio <= 3,
        "warm <= 0.5 s": warm["median_s"] <= 0.5,
        "peak RSS <= 1 GiB": peak <= GIB,
    }
    print(f"corpus: {', '.join(roots)}  ({files} files; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f})")
    print(f"{'command':<24} {'median s':>9} {'min s':>7} {'files/s':>8} {'peak RSS MiB':>13} {'x ruff':>7}")
    for s in series:
        print(
            f"{s['label']:<24} {s['median_s']:>9.2f} {s['min_s']:>7.2f} {files / s['median_s']:>8.0f} "
            f"{s['peak_rss_bytes'] / 2**20:>13.0f} {s['median_s'] / ruff_median:>7.2f}"
        )
    print(f"cold / ruff (default rules), per round: {', '.join(f'{r:.2f}' for r in per_round)}; median {ratio:.2f}")
    for name, ok in checks.items():
        print(f"  {'PASS' if ok else 'MISS'}  {name}")

    ruff_version = subprocess.run([ruff, "--version"], capture_output=True, text=True).stdout.strip()
    result = {
        "benchmark": "lint_speed",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_avg_1m_at_end": os.getloadavg()[0]},
        "tools": {"ruff": ruff_version},
        "corpus": {"roots": roots, "files": files},
        "series": [{k: v for k, v in s.items() if k != "last"} for s in series],
        "ratio_cold_to_ruff_default": ratio,
        "ratio_cold_to_ruff_default_per_round": per_round,
        "ratio_cold_to_ruff_classic": statistics.median(ratios("ruff (E4,E7,E9,F)")),
        "peak_rss_bytes": peak,
        "targets": checks,
        "inventory": inventory,
    }
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {results}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--measure-one":
        _measure_one(sys.argv[2], sys.argv[sys.argv.index("--") + 1 :])
        sys.exit(0)
    sys.exit(main())
