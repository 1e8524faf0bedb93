"""Speed of CUDA analysis (PG5xx/PG6xx) and of hipify translation.

Inputs are generated from the test corpus (warp reductions, ballots, PTX,
libraries, guarded blocks and non-warp code) renamed per copy:
  * one 1,000-line .cu file,
  * a tree of 200 files (~150 lines each).
Measured in one process, side by side: tree-sitter parse + every CUDA rule
(what `portagpu lint` runs per file), translate() with the built-in table and
with PyTorch's tables (its one-time import reported apart), and translate()
plus the JSON report (diagnose=True, as `portagpu hipify` runs it). Target:
<= 0.5 s per 1,000-line file including the report.

    python benchmarks/hipify_speed.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "corpus" / "cuda"
RESULTS = REPO / "benchmarks" / "results" / "hipify_speed.json"
TARGET_S_PER_1000_LINES = 0.5
TARGET_SMALL_FILE_S = 0.2


def startup(repeat: int) -> dict[str, float]:
    """Median wall and CPU seconds of one `portagpu hipify` process on a small file."""
    import os
    import resource
    import subprocess
    import tempfile

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="hipify-speed-") as tmp:
        src = Path(tmp) / "small.cu"
        src.write_text(make_source(60), encoding="utf-8")
        argv = [sys.executable, "-m", "portagpu", "hipify", str(src), "-o", str(Path(tmp) / "out")]
        subprocess.run(argv, env=env, capture_output=True, check=True)  # cache + bytecode
        walls, cpus = [], []
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(argv, env=env, capture_output=True, check=True)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {"wall_s": round(statistics.median(walls), 3),
            "cpu_s": round(statistics.median(cpus), 3)}


def _blocks() -> list[str]:
    texts = [(CORPUS / name).read_text(encoding="utf-8") for name in
             ("reduce_ballot_cub.cu", "non_warp_32.cu", "guarded.cu", "ptx_mma_libs.cu")]
    return [re.sub(r"//\s*expect:.*", "", t) for t in texts]


def _renamed(block: str, i: int) -> str:
    # give every function and macro a unique name so copies are distinct code
    names = set(re.findall(r"\b(?:void|float|unsigned|int)\s+(\w+)\s*\(", block))
    names |= set(re.findall(r"#define\s+(\w+)", block))
    for name in sorted(names, key=len, reverse=True):
        block = re.sub(rf"\b{name}\b", f"{name}_{i}", block)
    return re.sub(r"#pragma once\n", "", block)


def make_source(lines: int, seed: int = 0) -> str:
    blocks, out, i = _blocks(), [], seed * 1000
    while sum(b.count("\n") for b in out) < lines:
        out.append(_renamed(blocks[i % len(blocks)], i))
        i += 1
    text = "".join(out)
    return "\n".join(text.splitlines()[:lines]) + "\n"


def timed(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--files", type=int, default=200)
    args = parser.parse_args(argv)

    from portagpu.hipify_bridge import translate

    from portagpu.lint.catalogue import load_catalogue
    from portagpu.lint.cuda import check_cuda_file
    from portagpu.lint.model import LintSettings

    rules = [r for r in load_catalogue() if r.language == "cuda"]
    settings = LintSettings()
    big = make_source(1000)
    tree = [make_source(150, seed=k + 1) for k in range(args.files)]
    tree_lines = sum(t.count("\n") for t in tree)

    def analyse(texts):
        return lambda: [check_cuda_file("bench.cu", t, rules, settings) for t in texts]

    def translate_all(texts, engine, report=False):
        def run():
            for t in texts:
                tr = translate(t, engine=engine, diagnose=report)
                if report:
                    json.dumps(tr.report.to_dict())
        return run

    translate(big, engine="builtin", diagnose=True)  # warm caches: parser, catalogue, header
    rows = []
    has_torch = importlib.util.find_spec("torch") is not None
    torch_import_s = None
    if has_torch:
        start = time.perf_counter()
        from portagpu.hipify_bridge.engines import torch_tables

        torch_tables()
        torch_import_s = time.perf_counter() - start

    cases = [
        ("analysis (parse + PG5xx/PG6xx)", analyse),
        ("translate, builtin table", lambda ts: translate_all(ts, "builtin")),
        ("translate + JSON report, builtin", lambda ts: translate_all(ts, "builtin", True)),
    ]
    if has_torch:
        cases.append(("translate + JSON report, torch tables",
                      lambda ts: translate_all(ts, "torch", True)))
    for label, make in cases:
        one = timed(make([big]), args.repeat)
        many = timed(make(tree), max(1, args.repeat // 2))
        rows.append({
            "case": label,
            "file_1000_lines_s": round(one, 4),
            "tree_s": round(many, 3),
            "tree_s_per_1000_lines": round(many / tree_lines * 1000, 4),
        })

    print(f"1,000-line file; tree of {args.files} files, {tree_lines:,} lines "
          f"(median of {args.repeat}; {platform.processor() or platform.machine()})")
    print(f"{'case':40} {'1k-line file':>13} {'tree':>9} {'tree/1k lines':>14}")
    for row in rows:
        print(f"{row['case']:40} {row['file_1000_lines_s']:>12.3f}s {row['tree_s']:>8.2f}s "
              f"{row['tree_s_per_1000_lines']:>13.3f}s")
    if torch_import_s is not None:
        print(f"loading PyTorch's hipify tables (from the per-version cache after the "
              f"first run): {torch_import_s:.2f} s")
    small = startup(args.repeat)
    small_ok = small["cpu_s"] <= TARGET_SMALL_FILE_S
    print(f"one small file (60 lines), fresh `portagpu hipify` process: {small['wall_s']:.3f} s "
          f"wall, {small['cpu_s']:.3f} s CPU -> {'meets' if small_ok else 'MISSES'} the "
          f"{TARGET_SMALL_FILE_S} s target (CPU)")
    worst = max(max(r["file_1000_lines_s"], r["tree_s_per_1000_lines"]) for r in rows)
    verdict = "meets" if worst <= TARGET_S_PER_1000_LINES else "MISSES"
    print(f"slowest per 1,000 lines: {worst:.3f} s -> {verdict} the "
          f"{TARGET_S_PER_1000_LINES} s target")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "hipify_speed",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "repeat": args.repeat,
        "tree_files": args.files,
        "tree_lines": tree_lines,
        "target_s_per_1000_lines": TARGET_S_PER_1000_LINES,
        "torch_tables_import_s": None if torch_import_s is None else round(torch_import_s, 3),
        "rows": rows,
        "meets_target": worst <= TARGET_S_PER_1000_LINES,
        "small_file_process": small,
        "target_small_file_s": TARGET_SMALL_FILE_S,
        "small_file_meets_target": small_ok,
    }, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
