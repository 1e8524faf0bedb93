"""`portagpu check-kernels FILE|FOLDER|MODULE... --target gfx942,sm_90`: compile
Triton kernels (declared with @portagpu.kernelcheck.signature, listed in
[tool.portagpu.kernels], or autotuned) and CUDA C kernels (.cu files,
module-level portagpu.CudaKernel objects) for GPU targets with no GPU, and
report per specialisation and target: compiled or the compiler's error, threads
per block, shared memory/LDS, registers and spills, occupancy, and whether it
can run. `--builtin` checks portagpu's own kernels, every tuning.yaml row.

Exit status: 0 everything checked can run, 1 a kernel cannot run on a target
(an autotune config Triton merely skips does not count), 2 bad input."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "check-kernels",
        help="prove kernels compile and fit on AMD and NVIDIA GPUs, with no GPU",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="Python files, folders, importable modules, .cu/.cuh files",
    )
    p.add_argument(
        "--target",
        "-t",
        action="append",
        metavar="ARCHS",
        help="comma-separated targets: gfx942, gfx90a, gfx950, gfx1100, sm_80, sm_90, ... "
        "(default: [tool.portagpu] compile-for, else gfx942,gfx90a,gfx1100,sm_90,sm_80)",
    )
    p.add_argument(
        "--builtin",
        action="store_true",
        help="check portagpu's own kernels: every row of kernels/tuning.yaml",
    )
    p.add_argument("--format", choices=("table", "json", "sarif"), default="table")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE (default: stdout)"
    )
    p.add_argument("--problems-only", action="store_true", help="table: leave out rows that fit")
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="compile cache (default: $PORTAGPU_CACHE_DIR or the user cache folder)",
    )
    p.add_argument(
        "--no-cache", action="store_true", help="compile everything; read and write no cache"
    )
    p.add_argument("-j", "--jobs", type=int, default=2, help="compile processes (default: 2)")
    p.add_argument(
        "--pointer-dtype",
        default="fp16",
        help="element type assumed for undeclared pointer arguments of autotuned kernels "
        "(default: fp16)",
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when a kernel cannot run")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from portagpu.errors import ConfigError
    from portagpu.kernelcheck.cache import CompileCache
    from portagpu.kernelcheck.check import check_specs
    from portagpu.kernelcheck.cuda_check import check_cuda_specs
    from portagpu.kernelcheck.discover import discover
    from portagpu.kernelcheck.report import Report, render
    from portagpu.kernelcheck.targets import DEFAULT_TARGETS, parse_targets

    if not args.paths and not args.builtin:
        raise ConfigError("check-kernels: name files, folders or modules to check, or --builtin")
    if args.jobs < 1:
        raise ConfigError("-j/--jobs must be at least 1")
    from portagpu._toml import portagpu_table

    table, pyproject = portagpu_table(Path.cwd())
    root = pyproject.parent if pyproject else None
    raw = args.target or table.get("compile-for") or list(DEFAULT_TARGETS)
    targets = list(parse_targets(raw, "--target" if args.target else "[tool.portagpu] compile-for"))
    cache = (
        None
        if args.no_cache
        else CompileCache(args.cache_dir)
        if args.cache_dir
        else CompileCache()
    )
    kernels_table = table.get("kernels") if isinstance(table.get("kernels"), dict) else {}
    found = discover(
        args.paths, pointer_dtype=args.pointer_dtype, kernels_table=kernels_table, table_root=root
    )
    progress = (
        (lambda line: print(f"portagpu: {line}", file=sys.stderr)) if sys.stderr.isatty() else None
    )
    report = check_specs(found.specs, targets, cache=cache, workers=args.jobs, progress=progress)
    if found.cuda:
        report = report.merge(
            Report(check_cuda_specs(found.cuda, targets, cache=cache, workers=args.jobs), targets)
        )
    report.notes += found.notes
    if args.builtin:
        report = report.merge(_builtin(targets, cache, args.jobs, progress))
    text = render(
        report,
        args.format,
        **({"only_problems": args.problems_only} if args.format == "table" else {}),
    )
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(
            f"portagpu kernelcheck: {report.summary_line()}; report in {args.output}",
            file=sys.stderr,
        )
    else:
        print(text)
    return EXIT_FAILED if report.failures and not args.exit_zero else EXIT_OK


def _builtin(targets: list[Any], cache: Any, jobs: int, progress: Any) -> Any:
    """Each vendor's tuning rows against that vendor's targets."""
    from portagpu.kernelcheck.builtin import record_rows
    from portagpu.kernelcheck.check import check_specs
    from portagpu.kernelcheck.cuda_check import check_cuda_specs
    from portagpu.kernelcheck.report import Report

    report = Report([], [])
    groups: dict[tuple[str, int], list[Any]] = {}
    for target in targets:  # the rows depend on the vendor; launch shapes could on the warp size
        groups.setdefault((target.vendor, target.warp_size), []).append(target)
    for chosen in groups.values():
        specs, cuda, notes = record_rows(chosen[0])
        part = check_specs(specs, chosen, cache=cache, workers=jobs, progress=progress)
        part = part.merge(Report(check_cuda_specs(cuda, chosen, cache=cache, workers=jobs), chosen))
        part.notes += notes
        report = report.merge(part)
    return report
