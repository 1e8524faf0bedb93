"""Does `portagpu lint` stay linear in the number of `.cuda()` calls in one file?

Issue 13 item 10: lint time was quadratic in the `.cuda()` / `.to("cuda")`
calls of one file (5k lines 13 s, 10k 57 s, 20k > 300 s). This generates
one Python file of 1k to 100k lines, a third of them such calls (in
functions with and without a `device` parameter, in branches, at module
level), and times in a fresh process each:

  * `portagpu lint --no-cache -j 1 FILE` (findings), and
  * `portagpu lint --no-cache -j 1 --diff FILE` (every safe fix computed,
    applied, re-parsed and re-linted; nothing written).

Linear means the time per 1,000 lines stays flat as the file grows. Prints
a table and writes benchmarks/results/lint_scaling.json.

    python benchmarks/lint_scaling.py [--sizes 1000,5000,...] [--modes lint,diff]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lint_speed import measure  # noqa: E402 - one helper measures wall time and peak RSS

RESULTS = Path(__file__).parent / "results" / "lint_scaling.json"
SIZES = (1_000, 5_000, 10_000, 20_000, 50_000, 100_000)

BLOCK = """\
def step_{i}(model, batch, device):
    x = batch[0].cuda()
    y = batch[1].to("cuda")
    if batch:
        z = model(x).cuda(non_blocking=True)
    return z, y


def load_{i}(path):
    w = weights_{i}.cuda()
    return w.to("cuda")


t_{i} = table_{i}.cuda()
"""


# a script-style `main()` that grows with the file: no `device` parameter,
# so every call asks whether a `device` binding dominates it
MAIN_LINE = '    x_{i} = inputs[{i}].cuda()\n    y_{i} = model(x_{i}).to("cuda")\n'


def generate(lines: int) -> str:
    """A module of about `lines` lines: half small functions and module-level
    statements, half one long `main()`; a third or more of its lines call
    .cuda()/.to("cuda")."""
    parts = ["import torch\n\n\n"]
    per_block = BLOCK.count("\n")
    for i in range(max(1, lines // 2 // per_block)):
        parts.append(BLOCK.format(i=i))
    parts.append("\n\ndef main(inputs, model):\n")
    parts.extend(MAIN_LINE.format(i=i) for i in range(max(1, lines // 4)))
    parts.append("    return model\n")
    return "".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--modes", default="lint,diff")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = args.modes.split(",")

    work = Path(tempfile.mkdtemp(prefix="lint_scaling_"))
    (work / "pyproject.toml").write_text("[tool.portagpu.lint]\n")
    rows = []
    for size in sizes:
        text = generate(size)
        path = work / f"gen_{size}.py"
        path.write_text(text)
        calls = text.count(".cuda(") + text.count('.to("cuda")')
        row = {"lines": text.count("\n"), "bytes": len(text.encode()), "calls": calls}
        for mode in modes:
            cmd = [
                sys.executable,
                "-m",
                "portagpu",
                "lint",
                "--no-cache",
                "-j",
                "1",
                "--exit-zero",
                "-q",
                path.name,
            ]
            if mode == "diff":
                cmd.insert(-1, "--diff")
            result = measure(cmd, str(work))
            if result["rc"] not in (0, 1):
                print(result["stderr_tail"], file=sys.stderr)
                return 1
            row[mode] = {
                "wall_s": round(result["wall_s"], 3),
                "peak_rss_bytes": result["peak_rss_bytes"],
            }
        rows.append(row)
        _print_row(row, modes)
    report = {
        "what": "portagpu lint on one generated file; time per 1k lines flat = linear",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


def _print_row(row: dict, modes: list[str]) -> None:
    if row["lines"] == min(row["lines"], 10**9) and not getattr(_print_row, "header", False):
        head = f"{'lines':>8} {'calls':>7}" + "".join(
            f" {m + ' s':>10} {m + ' s/1k':>10} {m + ' MiB':>9}" for m in modes
        )
        print(head)
        _print_row.header = True  # type: ignore[attr-defined]
    cells = f"{row['lines']:>8} {row['calls']:>7}"
    for mode in modes:
        wall = row[mode]["wall_s"]
        cells += f" {wall:>10.2f} {wall / row['lines'] * 1000:>10.3f} {row[mode]['peak_rss_bytes'] / 2**20:>9.0f}"
    print(cells, flush=True)


if __name__ == "__main__":
    sys.exit(main())
