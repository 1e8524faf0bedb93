"""How right is `portagpu lint` on real code? Recall and precision against hand labels.

Lints local copies of real public files (never builds or runs them) with every
target on, maps each finding's rule code to one of the eight label categories,
and scores them against the labels (format: benchmarks/lint_truth/README.md).
Prints per-category, per-kind and pooled recall/precision, lists misses and
false positives as file:line, and writes benchmarks/results/lint_truth.json.

    python benchmarks/lint_truth.py benchmarks/lint_truth/labels_*.csv /work/corpus/lint

Only the labels are in the repo; LOCAL_DIR holds <owner>__<repo>/<path>.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "lint_truth.json"

CATEGORIES = (
    "warp32-mask",
    "warp32-literal",
    "ballot-32bit",
    "inline-ptx",
    "cuda-only-api",
    "torch-cuda",
    "nvml",
    "triton-warps",
)
CUDA_CATEGORIES = CATEGORIES[:5]
LABELS = ("finding", "clean", "ambiguous")
KINDS = ("cuda", "embedded", "python")

# Rule code -> category. Codes not listed fall back on their family (the YAML
# file stem) through FAMILY_CATEGORY; None means "not scored" (meta findings,
# PG699's "could not check" notes).
CATEGORY_OF_RULE: dict[str, str | None] = {
    "PG501": "warp32-mask",
    "PG502": "warp32-mask",
    "PG503": "ballot-32bit",
    "PG504": "warp32-literal",
    "PG505": "warp32-literal",
    "PG506": "warp32-literal",
    "PG507": "warp32-literal",
    "PG508": "warp32-literal",
    "PG509": "warp32-literal",
    "PG510": "warp32-literal",
    "PG309": "warp32-literal",  # numba.cuda warp-width constant
    "PG312": "warp32-mask",  # numba.cuda warp function given 0xFFFFFFFF
    "PG601": "inline-ptx",
    "PG403": "inline-ptx",
    "PG404": "cuda-only-api",
    "PG406": "cuda-only-api",  # Triton's NVIDIA-only TMA descriptor helpers
    "PG699": None,
}
FAMILY_CATEGORY: dict[str, str | None] = {
    "cuda_warp": "warp32-literal",
    "cuda_libs": "cuda-only-api",
    "cupy": "cuda-only-api",
    "nvidia-python-toolkits": "cuda-only-api",
    "torch-device": "torch-cuda",
    "distributed": "torch-cuda",  # torch.distributed idioms (nccl, CUDA_VISIBLE_DEVICES)
    "telemetry": "nvml",
    "dependencies": "cuda-only-api",  # NVIDIA-only pins (cupy-cuda12x, +cu121 wheels)
    "triton": "triton-warps",
    "meta": None,
}

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")
# A Python string holding any of these is CUDA C source (kind "embedded").
CUDA_MARKERS = (
    "__global__",
    "__device__",
    "threadIdx",
    "blockIdx",
    "__shfl",
    'extern "C"',
    "asm(",
    "asm volatile",
)


@dataclass(frozen=True)
class Label:
    repo: str
    commit: str
    path: str
    line: int
    category: str
    label: str


def read_labels(paths: list[str]) -> list[Label]:
    out = []
    for p in paths:
        with open(p, newline="", encoding="utf-8") as fh:
            for n, row in enumerate(csv.DictReader(fh), start=2):
                where = f"{p}:{n}"
                try:
                    lab = Label(
                        row["repo"],
                        row["commit"],
                        row["path"],
                        int(row["line"]),
                        row["category"],
                        row["label"],
                    )
                except (KeyError, TypeError, ValueError) as exc:
                    sys.exit(
                        f"lint_truth: {where}: bad row ({exc}); see benchmarks/lint_truth/README.md"
                    )
                if lab.category not in CATEGORIES:
                    sys.exit(f"lint_truth: {where}: unknown category {lab.category!r}")
                if lab.label not in LABELS:
                    sys.exit(f"lint_truth: {where}: unknown label {lab.label!r}")
                out.append(lab)
    return out


def local_name(repo: str, path: str) -> str:
    return f"{repo.replace('/', '__')}/{path}"


def category_of(code: str, families: dict[str, str]) -> str | None:
    if code in CATEGORY_OF_RULE:
        return CATEGORY_OF_RULE[code]
    return FAMILY_CATEGORY.get(families.get(code, ""), "unmapped")


def rule_families() -> dict[str, str]:
    from portagpu.lint.catalogue import load_catalogue

    return {r.id: r.family for r in load_catalogue()}


def run_lint(local_dir: Path, files: list[str], jobs: int | None) -> tuple[list[dict], float]:
    """Runs `portagpu lint` as a user would, every target on, on the named files."""
    with tempfile.TemporaryDirectory() as tmp:
        # An empty config: the corpus is linted with the defaults, not this repo's.
        cfg = Path(tmp, "pyproject.toml")
        cfg.write_text("[tool.portagpu.lint]\n")
        cmd = [
            sys.executable,
            "-m",
            "portagpu",
            "lint",
            "--format",
            "json",
            "--exit-zero",
            "--no-cache",
        ]
        cmd += ["--target", "rocm,mps,cpu", "--config", str(cfg)]
        if jobs:
            cmd += ["-j", str(jobs)]
        start = time.perf_counter()
        proc = subprocess.run(
            cmd + files, cwd=local_dir, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"lint_truth: portagpu lint failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout or "[]"), wall


def cuda_string_lines(text: str) -> set[int] | None:
    """Lines of a Python file that lie inside a string literal holding CUDA C.
    None when the file does not tokenize (then kinds fall back on category)."""
    lines: set[int] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    fstring: list[tokenize.TokenInfo] = []
    for tok in tokens:
        name = tokenize.tok_name[tok.type]
        if name == "FSTRING_START":
            fstring.append(tok)
        elif name == "FSTRING_END" and fstring:
            start = fstring.pop()
            body = text.splitlines()[start.start[0] - 1 : tok.end[0]]
            if any(m in "\n".join(body) for m in CUDA_MARKERS) or tok.end[0] > start.start[0] + 2:
                lines.update(range(start.start[0], tok.end[0] + 1))
        elif tok.type == tokenize.STRING and (
            any(m in tok.string for m in CUDA_MARKERS) or tok.end[0] > tok.start[0] + 2
        ):
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def kind_of(path: str, line: int, category: str, string_lines: dict[str, set[int] | None]) -> str:
    if not path.endswith(PYTHON_SUFFIXES):
        return "cuda"
    inside = string_lines.get(path)
    if inside is None:  # does not tokenize: CUDA-C categories are embedded
        return "embedded" if category in CUDA_CATEGORIES[:3] else "python"
    return "embedded" if line in inside else "python"


def ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def tally(keys: set, truth: dict, reported: set) -> dict:
    tp = sum(1 for k in keys if truth.get(k) == "finding" and k in reported)
    fn = sum(1 for k in keys if truth.get(k) == "finding" and k not in reported)
    fp = sum(1 for k in keys if k in reported and truth.get(k) not in ("finding", "ambiguous"))
    return {
        "tp": tp,
        "fn": fn,
        "fp": fp,
        "recall": ratio(tp, tp + fn),
        "precision": ratio(tp, tp + fp),
    }


def score(
    labels: list[Label], findings: list[dict], families: dict[str, str], local_dir: Path
) -> dict:
    labelled = {local_name(lab.repo, lab.path) for lab in labels}
    truth: dict[tuple[str, int, str], str] = {}
    for lab in labels:
        if lab.line > 0:
            truth[(local_name(lab.repo, lab.path), lab.line, lab.category)] = lab.label
    reported: set[tuple[str, int, str]] = set()
    unmapped: dict[str, int] = defaultdict(int)
    rules_of: dict[tuple[str, int, str], set[str]] = defaultdict(set)
    for f in findings:
        path = Path(f["path"]).as_posix()
        if path not in labelled:
            continue
        cat = category_of(f["code"], families)
        if cat == "unmapped":
            unmapped[f["code"]] += 1
        if cat not in CATEGORIES:
            continue
        key = (path, int(f["line"]), cat)
        reported.add(key)
        rules_of[key].add(f["code"])

    string_lines = {
        p: cuda_string_lines((local_dir / p).read_text(encoding="utf-8", errors="replace"))
        for p in labelled
        if p.endswith(".py")
    }
    keys = set(truth) | reported
    by_cat = {c: tally({k for k in keys if k[2] == c}, truth, reported) for c in CATEGORIES}
    by_kind = {
        kd: tally(
            {k for k in keys if kind_of(k[0], k[1], k[2], string_lines) == kd}, truth, reported
        )
        for kd in KINDS
    }
    misses = sorted(k for k in keys if truth.get(k) == "finding" and k not in reported)
    false_pos = sorted(
        k for k in keys if k in reported and truth.get(k) not in ("finding", "ambiguous")
    )
    return {
        "files": len(labelled),
        "repos": len({lab.repo for lab in labels}),
        "labels": {lb: sum(1 for v in truth.values() if v == lb) for lb in LABELS},
        "pooled": tally(keys, truth, reported),
        "pooled_cuda": tally({k for k in keys if k[2] in CUDA_CATEGORIES}, truth, reported),
        "by_category": by_cat,
        "by_kind": by_kind,
        "misses": [f"{p}:{ln} {c}" for p, ln, c in misses],
        "false_positives": [
            f"{p}:{ln} {c} ({','.join(sorted(rules_of[(p, ln, c)]))})" for p, ln, c in false_pos
        ],
        "unmapped_codes": dict(unmapped),
    }


def fmt(v: float | None) -> str:
    return "  -  " if v is None else f"{v:5.2f}"


def print_table(res: dict) -> None:
    print(
        f"lint_truth: {res['files']} files from {res['repos']} repositories; labels {res['labels']}"
    )
    print(f"{'':18} {'recall':>6} {'prec':>6} {'tp':>4} {'fn':>4} {'fp':>4}")
    rows = [(c, res["by_category"][c]) for c in CATEGORIES]
    rows += [("kind " + k, res["by_kind"][k]) for k in KINDS]
    rows += [("pooled CUDA cats", res["pooled_cuda"]), ("pooled", res["pooled"])]
    for name, t in rows:
        print(
            f"{name:18} {fmt(t['recall']):>6} {fmt(t['precision']):>6} {t['tp']:4} {t['fn']:4} {t['fp']:4}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", metavar="LABELS... LOCAL_DIR")
    ap.add_argument(
        "-o", "--output", default=str(RESULTS), help="JSON results (default: %(default)s)"
    )
    ap.add_argument("-j", "--jobs", type=int, default=None, help="passed to portagpu lint")
    ap.add_argument(
        "-q", "--quiet", action="store_true", help="no lists of misses / false positives"
    )
    args = ap.parse_args(argv)
    if len(args.paths) < 2:
        ap.error("need at least one label file and LOCAL_DIR")
    *label_files, local = args.paths
    local_dir = Path(local)
    labels = read_labels(label_files)
    wanted = sorted({local_name(lab.repo, lab.path) for lab in labels})
    missing = [p for p in wanted if not (local_dir / p).is_file()]
    if missing:
        print(
            f"lint_truth: {len(missing)} labelled files are not in {local_dir} (skipped):",
            file=sys.stderr,
        )
        for p in missing:
            print(f"  {p}", file=sys.stderr)
        labels = [lab for lab in labels if local_name(lab.repo, lab.path) not in missing]
        wanted = [p for p in wanted if p not in missing]
    if not wanted:
        sys.exit("lint_truth: no labelled file found locally")
    findings, wall = run_lint(local_dir, wanted, args.jobs)
    res = score(labels, findings, rule_families(), local_dir)
    res["lint_wall_s"] = round(wall, 2)
    res["label_files"] = [os.path.relpath(p) for p in label_files]
    res["when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print_table(res)
    if not args.quiet:
        print("\nmisses (labelled finding, not reported):")
        print("\n".join(f"  {m}" for m in res["misses"]) or "  none")
        print("\nfalse positives (reported, not labelled finding/ambiguous):")
        print("\n".join(f"  {m}" for m in res["false_positives"]) or "  none")
    if res["unmapped_codes"]:
        print(f"\nunmapped rule codes (add to CATEGORY_OF_RULE): {res['unmapped_codes']}")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(res, indent=1) + "\n")
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
