"""`portagpu hipify PATH...`: translate CUDA (.cu/.cuh files and CUDA sources
embedded in Python) to HIP, report honestly what was and was not converted,
and with --check prove the result compiles for gfx90a (wave64) and gfx1030
(wave32).

Argument parsing and printing only; the engine is portagpu.hipify_bridge.tree."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

BACKUP_SUFFIX = ".prehip"  # hipify_bridge.writing's; not imported, to keep `--help` light
EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "hipify",
        help="translate CUDA to HIP, with the warp fixes hipify lacks and an honest report",
        description=__doc__,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help=".cu/.cuh/.py files or directories")
    p.add_argument(
        "-o", "--output", metavar="DIR", help="write results under DIR (default: beside each input)"
    )
    p.add_argument(
        "--inplace",
        action="store_true",
        help=f"replace the inputs (a backup is kept as *{BACKUP_SUFFIX})",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="compile the original with nvcc and the HIP result with hipcc for gfx90a and gfx1030",
    )
    p.add_argument(
        "-I",
        "--include-dir",
        dest="include_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="where the project's `#include` lines find its headers (translated too), and "
        "an include dir of the --check compiles; compile_commands.json is read where present",
    )
    p.add_argument(
        "-D",
        "--define",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="a macro for the --check compiles",
    )
    p.add_argument("--std", default=None, help="C++ standard of the --check compiles (c++17)")
    p.add_argument(
        "--allow-skip",
        action="store_true",
        help="with --check, exit 0 even when no compiler was found (by default a "
        "check that compiled nothing fails)",
    )
    p.add_argument(
        "--targets",
        default="gfx90a,gfx1030",
        help="hipcc --offload-arch targets for --check (default: gfx90a,gfx1030)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--embedded",
        choices=("sidecar", "rewrite"),
        default="sidecar",
        help="CUDA strings in Python: write a .hip sidecar (default) or rewrite "
        "the literal in the Python file (needs --inplace or -o)",
    )
    p.add_argument(
        "--engine",
        default="auto",
        choices=("auto", "hipify-perl", "hipify-clang", "torch", "builtin"),
        help="API renaming engine (auto: hipify-perl, hipify-clang, torch, builtin)",
    )
    p.add_argument(
        "--warp-size",
        type=int,
        choices=(32, 64),
        default=None,
        help="pin PORTAGPU_WARP_SIZE instead of the per-target wavefront size",
    )
    p.add_argument(
        "--header",
        choices=("inline", "include", "none"),
        default="inline",
        help="how portagpu_hip_compat.h reaches the result (default: inline)",
    )
    p.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    p.set_defaults(func=run)


def print_text(results: list[Any], total: dict[str, Any], out=None) -> None:
    out = out or sys.stdout
    for res in results:
        if res.error:
            shown = res.error if res.error.startswith(res.path) else f"{res.path}: {res.error}"
            print(f"error: {shown}", file=out)
            continue
        for s in res.sources:
            dest = ", ".join(res.outputs) or "(nothing written)"
            print(f"{s['origin']} -> {dest}  [engine: {s['engine']}]", file=out)
            top = sorted(s["converted"].items(), key=lambda kv: -kv[1])[:6]
            listed = ", ".join(f"{k} x{v}" for k, v in top)
            print(
                f"  converted {s['converted_refs']} refs"
                + (
                    f" ({listed}, ...)"
                    if len(s["converted"]) > 6
                    else f" ({listed})"
                    if listed
                    else ""
                ),
                file=out,
            )
            print(f"  warp rewrites: {len(s['warp_rewrites'])}", file=out)
            for w in s["warp_rewrites"]:
                print(
                    f"    {w['line']}:{w['col']} {w['rule']} `{w['before']}` -> {w['after']}",
                    file=out,
                )
            _print_models(s, out)
            print(f"  not converted: {len(s['unconverted'])}", file=out)
            for u in s["unconverted"]:
                print(f"    {u['line']}:{u['col']} {u['rule']} {u['message']}", file=out)
            _print_blockers(s, out)
            if s["libraries"]:
                print(f"  needs: {', '.join(s['libraries'])}", file=out)
            for w in s["warnings"]:
                print(f"  warning: {w}", file=out)
            for c in s.get("checks", []):
                detail = f": {c['detail']}" if c["detail"] else ""
                print(
                    f"  check {c['target']}: {c['status']}{detail} ({c['seconds']:.1f} s)", file=out
                )
        for note in res.notes:
            print(f"  note: {note}", file=out)
    checks = total["checks"]
    print(
        f"Total: {total['files']} files, {total['sources']} sources, "
        f"{total['converted_refs']} refs converted, {total['warp_rewrites']} warp rewrites, "
        f"{total['unconverted']} not converted, {total['errors']} errors"
        + (
            f"; checks: {checks['ok']} ok, {checks['failed']} failed, "
            f"{checks['not-checkable']} not checkable here, {checks['skipped']} skipped"
            if any(checks.values())
            else ""
        ),
        file=out,
    )


def _print_models(s: dict[str, Any], out) -> None:
    models = s.get("warp_models", [])
    if models:
        print(f"  warp models: {len(models)} functions", file=out)
    for m in models:
        print(
            f"    {m['line']} {m['function']} ({m['kind']}): {m['model']} - {m['why'][0]}", file=out
        )
    for k in s.get("kept", []):
        print(
            f"    {k['line']}:{k['col']} {k['rule']} `{k['construct']}` kept: {k['why']}", file=out
        )
    for item in s.get("suspect", []):
        print(
            f"  suspect in the original: {item['line']} {item['function']}: {item['message']}",
            file=out,
        )


def _print_blockers(s: dict[str, Any], out) -> None:
    items = s.get("blockers", [])
    if items:
        print(f"  HIP cannot compile as written: {len(items)}", file=out)
    for b in items:
        count = f" (x{b['count']})" if b.get("count") else ""
        done = "shimmed: " if b["shimmed"] else "replace with: "
        print(
            f"    {b['line']}:{b['col']} {b['id']} `{b['construct']}`{count}: {b['reason']}; "
            f"{done}{b['replacement']}",
            file=out,
        )


def run(args: argparse.Namespace) -> int:
    from portagpu.hipify_bridge.tree import HipifyOptions, hipify_paths, totals

    if args.inplace and args.output:
        print("portagpu: error: --inplace and -o are exclusive", file=sys.stderr)
        return EXIT_ERROR
    if args.output and os.path.exists(args.output) and not os.path.isdir(args.output):
        # checked before anything is written: every output would fail on it
        print(f"portagpu: error: -o {args.output}: not a folder", file=sys.stderr)
        return EXIT_ERROR
    options = HipifyOptions(
        output=args.output,
        include_dirs=tuple(args.include_dirs),
        defines=tuple(args.defines),
        std=args.std,
        inplace=args.inplace,
        check=args.check,
        targets=tuple(t.strip() for t in args.targets.split(",") if t.strip()),
        embedded=args.embedded,
        engine=args.engine,
        warp_size=args.warp_size,
        header=args.header,
        dry_run=args.dry_run,
    )
    results = hipify_paths(args.paths, options)
    total = totals(results)
    if args.format == "json":
        json.dump({"files": [r.to_dict() for r in results], "total": total}, sys.stdout, indent=2)
        print()
    else:
        print_text(results, total)
    if total["errors"]:
        return EXIT_ERROR
    checks = total["checks"]
    ran = sum(checks.values())
    if args.check and ran and checks["skipped"] == ran and not args.allow_skip:
        # a pre-commit hook must not pass vacuously on a machine with no compiler
        print(
            "portagpu: error: --check compiled nothing: neither nvcc nor hipcc is on PATH "
            "(install hipcc, or pass --allow-skip to accept)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_FAILED if checks["failed"] else EXIT_OK
