"""hipify on real CUDA: does the translation compile for AMD, next to what
torch.utils.hipify alone gives?

The corpus is not in this repository. Fetch each repository of the manifest
(benchmarks/hipify_real/manifest.csv: repo, commit, path, git blob, build
flags, libraries the file needs that Debian lacks) at its commit and place it
as CORPUS_DIR/<repository name>/ (e.g. CORPUS_DIR/llm.c/dev/cuda/adamw.cu).
Files whose blob differs from the manifest are reported, not measured.

Per translation unit (a .cu file of the manifest):
  * nvcc -c of the original with the project's flags (-I/-D/-std/-rdc);
  * `portagpu hipify UNIT -o OUT --format json` (with -I/-D/--std when the CLI
    takes them), then hipcc -c of the result for gfx90a (wave64) and gfx1030
    (wave32); the warp model chosen per kernel and the report's items;
  * torch.utils.hipify alone, used as PyTorch's cpp_extension uses it (in place
    on a copy of the repository, the unit as extra file, the project's -I dirs
    as header_include_dirs), then the same hipcc compiles.
Target: of the units whose original compiles with nvcc and that need no library
missing from Debian (hipBLAS, hipCUB, ...), >= 80% compile for both targets.

    python benchmarks/hipify_real.py CORPUS_DIR [--only SUBSTRING] [--jobs 2]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MANIFEST = REPO / "benchmarks" / "hipify_real" / "manifest.csv"
RESULTS = REPO / "benchmarks" / "results" / "hipify_real.json"
TARGETS = ("gfx90a", "gfx1030")
TARGET_SHARE = 0.8


@dataclass
class Unit:
    repo: str
    commit: str
    path: str
    blob: str
    flags: str
    needs: list[str]
    root: Path = Path()
    row: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.repo.split('/')[1]}/{self.path}"

    @property
    def source(self) -> Path:
        return self.root / self.path

    def compile_flags(self, include_root: Path | None = None):
        """The manifest's flags; -I dirs are relative to the repository root."""
        from portagpu.hipify_bridge.compile_check import CompileFlags

        base = include_root or self.root
        includes, defines, std, rdc = [], [], "c++17", False
        for flag in self.flags.split():
            if flag.startswith("-I"):
                includes.append(str(base / flag[2:]))
            elif flag.startswith("-D"):
                defines.append(flag[2:])
            elif flag.startswith("-std="):
                std = flag[5:]
            elif flag == "-rdc":
                rdc = True
        return CompileFlags(tuple(includes), tuple(defines), std, rdc)


def load_manifest(path: Path, corpus: Path) -> list[Unit]:
    units = []
    with path.open(newline="", encoding="utf-8") as fh:
        for rec in csv.DictReader(fh):
            unit = Unit(
                rec["repo"],
                rec["commit"],
                rec["path"],
                rec["blob"],
                rec["flags"],
                [n for n in rec["needs"].split(";") if n],
            )
            unit.root = corpus / rec["repo"].split("/")[1]
            units.append(unit)
    return units


def git_blob(path: Path) -> str:
    return subprocess.run(
        ["git", "hash-object", str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()


# --- translation -----------------------------------------------------------------------


def cli_takes_flags() -> bool:
    out = subprocess.run(
        [sys.executable, "-m", "portagpu", "hipify", "--help"], capture_output=True, text=True
    ).stdout
    return "--include-dir" in out or "\n  -I " in out


def portagpu_translate(unit: Unit, out: Path, with_flags: bool) -> dict[str, Any]:
    """Run the CLI as a user would; return the main output, its -I dirs, report."""
    argv = [
        sys.executable,
        "-m",
        "portagpu",
        "hipify",
        str(unit.source),
        "-o",
        str(out),
        "--format",
        "json",
    ]
    if with_flags:
        for flag in unit.flags.split():
            if flag.startswith("-I"):
                argv += ["-I", str(unit.root / flag[2:])]
            elif flag.startswith("-D"):
                argv += ["-D", flag[2:]]
            elif flag.startswith("-std="):
                argv += ["--std", flag[5:]]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": (proc.stderr or proc.stdout).strip()[-300:], "seconds": seconds}
    files = data.get("files", [])
    main = next((f for f in files if Path(f["path"]).resolve() == unit.source.resolve()), None)
    if main is None or main.get("error") or not main.get("outputs"):
        return {"error": (main or {}).get("error") or "no output", "seconds": seconds}
    sources = main.get("sources", [])
    report: dict[str, int] = {}
    models: list[dict[str, Any]] = []
    for entry in sources + [s for f in files if f is not main for s in f.get("sources", [])]:
        for item in entry.get("unconverted", []):
            report[item["rule"]] = report.get(item["rule"], 0) + 1
        for item in entry.get("blockers", []):
            report[item["id"]] = report.get(item["id"], 0) + 1
        if entry.get("suspect"):
            report["suspect"] = report.get("suspect", 0) + len(entry["suspect"])
        models += entry.get("warp_models", [])
    return {
        "output": main["outputs"][0],
        "include_dirs": main.get("hip_include_dirs"),
        "headers": [f["path"] for f in files if f is not main],
        "report": dict(sorted(report.items())),
        "warp_models": models,
        "seconds": round(seconds, 2),
    }


TORCH_WORKER = r"""
import glob, json, os, sys
from torch.utils.hipify import hipify_python as hp
jobs = json.loads(sys.stdin.read())
results = {}
for job in jobs:
    hp.HIPIFY_FINAL_RESULT.clear()
    try:
        res = hp.hipify(project_directory=job["root"], output_directory=job["root"],
                        includes=[os.path.join(job["root"], "*")], extra_files=[job["unit"]],
                        header_include_dirs=job["include_dirs"], is_pytorch_extension=True,
                        hipify_extra_files_only=True, show_detailed=False, show_progress=False)
        out = res[job["unit"]].hipified_path or job["unit"]
        results[job["unit"]] = {"output": out}
    except Exception as exc:
        results[job["unit"]] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
print(json.dumps(results))
"""


def torch_translate(units: list[Unit], scratch: Path) -> dict[str, dict[str, Any]]:
    """torch.utils.hipify on a copy of each unit's repository (it edits in place)."""
    jobs, copies = [], {}
    for i, unit in enumerate(units):
        copy = scratch / f"torch{i}" / unit.root.name
        shutil.copytree(unit.root, copy, symlinks=True)
        copies[str(copy / unit.path)] = (unit, copy)
        flags = unit.compile_flags(copy)
        jobs.append(
            {
                "root": str(copy),
                "unit": str(copy / unit.path),
                "include_dirs": list(flags.include_dirs),
            }
        )
    proc = subprocess.run(
        [sys.executable, "-c", TORCH_WORKER], input=json.dumps(jobs), capture_output=True, text=True
    )
    try:
        done = json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {u.name: {"error": proc.stderr.strip()[-300:]} for u in units}
    results = {}
    for path, res in done.items():
        unit, copy = copies[path]
        res["include_dirs"] = list(unit.compile_flags(copy).include_dirs)
        results[unit.name] = res
    return results


# --- compiling ---------------------------------------------------------------------------


def compile_all(units: list[Unit], jobs: int) -> None:
    from portagpu.hipify_bridge.compile_check import compile_cuda, compile_hip

    work = []
    for unit in units:
        flags = unit.compile_flags()
        work.append((unit.row, "nvcc", compile_cuda, (str(unit.source), flags)))
        for tool in ("portagpu", "torch"):
            res = unit.row[tool]
            if "output" not in res:
                continue
            out = res["output"]
            dirs = res.get("include_dirs")
            if dirs is None:  # a CLI that does not map -I dirs: the user's own dirs
                dirs = list(flags.include_dirs)
            hip_flags = flags.with_include_dirs([os.path.dirname(out), *dirs])
            for target in TARGETS:
                work.append((res, target, compile_hip, (out, target, None, (), hip_flags)))

    def one(item):
        holder, key, fn, args = item
        result = fn(*args)
        return (
            holder,
            key,
            {
                "status": result.status,
                "detail": result.detail[:300],
                "seconds": round(result.seconds, 1),
            },
        )

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for holder, key, result in pool.map(one, work):
            holder.setdefault("compiles", {})[key] = result


# --- summary -----------------------------------------------------------------------------


def both_ok(res: dict[str, Any]) -> bool:
    compiles = res.get("compiles", {})
    return all(compiles.get(t, {}).get("status") == "ok" for t in TARGETS)


def summarise(units: list[Unit]) -> dict[str, Any]:
    measured = [u for u in units if "compiles" in u.row]
    nvcc_ok = [u for u in measured if u.row["compiles"]["nvcc"]["status"] == "ok"]
    eligible = [u for u in nvcc_ok if not u.needs]
    out: dict[str, Any] = {
        "units": len(measured),
        "nvcc_ok": len(nvcc_ok),
        "eligible": len(eligible),
    }
    for tool in ("portagpu", "torch"):
        ok = [u.name for u in eligible if both_ok(u.row[tool])]
        out[tool] = {
            "both_targets_ok": len(ok),
            "share": round(len(ok) / len(eligible), 3) if eligible else None,
            "any_unit_both_ok": sum(1 for u in measured if both_ok(u.row[tool])),
            "failing_eligible": [u.name for u in eligible if u.name not in ok],
        }
    out["meets_target"] = bool(eligible) and out["portagpu"]["share"] >= TARGET_SHARE
    return out


def _mark(res: dict[str, Any], key: str) -> str:
    status = res.get("compiles", {}).get(key, {}).get("status")
    return {"ok": "ok", "failed": "FAIL", "not-checkable": "n/c", "skipped": "skip"}.get(
        status, "err" if "error" in res else "-"
    )


def print_table(units: list[Unit], summary: dict[str, Any]) -> None:
    print(
        f"{'unit':58} {'nvcc':>4} | {'pg 90a':>6} {'1030':>4} | {'th 90a':>6} {'1030':>4} | "
        f"{'needs':10} | warp models; report"
    )
    for u in units:
        if "compiles" not in u.row:
            continue
        pg, th = u.row["portagpu"], u.row["torch"]
        models: dict[str, int] = {}
        for m in pg.get("warp_models", []):
            models[m["model"]] = models.get(m["model"], 0) + 1
        model_text = ",".join(f"{k}x{v}" for k, v in sorted(models.items())) or "-"
        report = ",".join(f"{k}x{v}" for k, v in pg.get("report", {}).items())
        print(
            f"{u.name[:58]:58} {_mark(u.row, 'nvcc'):>4} | {_mark(pg, 'gfx90a'):>6} "
            f"{_mark(pg, 'gfx1030'):>4} | {_mark(th, 'gfx90a'):>6} {_mark(th, 'gfx1030'):>4} | "
            f"{';'.join(u.needs)[:10]:10} | {model_text}; {report[:60]}"
        )
    s = summary
    print(
        f"\n{s['units']} units; nvcc compiles {s['nvcc_ok']} originals; {s['eligible']} of "
        "them need no library missing from Debian"
    )
    for tool in ("portagpu", "torch"):
        t = s[tool]
        share = f"{t['share']:.0%}" if t["share"] is not None else "-"
        print(
            f"  {tool:9} both gfx90a and gfx1030 compile: {t['both_targets_ok']}/"
            f"{s['eligible']} = {share} (all units: {t['any_unit_both_ok']})"
        )
    print(f"target >= {TARGET_SHARE:.0%} for portagpu: {'met' if s['meets_target'] else 'MISSED'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--only", default="", help="measure units whose name contains this")
    parser.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--label", default="", help="a note stored with the results")
    args = parser.parse_args(argv)

    units = [u for u in load_manifest(args.manifest, args.corpus.resolve()) if args.only in u.name]
    skipped = []
    for unit in units:
        if not unit.source.is_file():
            skipped.append(f"{unit.name}: missing")
        elif git_blob(unit.source) != unit.blob:
            skipped.append(f"{unit.name}: differs from blob {unit.blob[:10]}")
    units = [u for u in units if not any(s.startswith(u.name + ":") for s in skipped)]
    for line in skipped:
        print(f"not measured: {line}", file=sys.stderr)

    with_flags = cli_takes_flags()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hipify-real-") as tmp:
        scratch = Path(tmp)
        torch_results = torch_translate(units, scratch)
        for i, unit in enumerate(units):
            unit.row = {
                "name": unit.name,
                "repo": unit.repo,
                "commit": unit.commit,
                "path": unit.path,
                "flags": unit.flags,
                "needs": unit.needs,
                "portagpu": portagpu_translate(unit, scratch / f"pg{i}", with_flags),
                "torch": torch_results.get(unit.name, {"error": "not run"}),
            }
        compile_all(units, args.jobs)
    summary = summarise(units)
    print_table(units, summary)
    elapsed = time.perf_counter() - start
    if args.only:
        print(f"(--only: not written to {args.out.relative_to(REPO)})")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "benchmark": "hipify_real",
                "label": args.label,
                "portagpu_commit": subprocess.run(
                    ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
                ).stdout.strip(),
                "repositories": sorted({f"{u.repo}@{u.commit}" for u in units}),
                "cli_takes_flags": with_flags,
                "targets": list(TARGETS),
                "machine": platform.machine(),
                "seconds": round(elapsed, 1),
                "summary": summary,
                "not_measured": skipped,
                "units": [u.row for u in units],
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {args.out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
