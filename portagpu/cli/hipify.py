"""`portagpu hipify PATH...`: translate CUDA (.cu/.cuh files and CUDA sources
embedded in Python) to HIP, report honestly what was and was not converted,
and with --check prove the result compiles for gfx90a (wave64) and gfx1030
(wave32)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CUDA_SUFFIXES = (".cu", ".cuh", ".cu.cc")
PYTHON_SUFFIX = ".py"
SKIP_DIRS = {".git", ".hg", ".venv", "venv", "__pycache__", "node_modules", "build", "dist",
             ".tox", ".mypy_cache", ".ruff_cache"}
BACKUP_SUFFIX = ".prehip"
MARKER = "// portagpu hipify: generated from {name} ({engine}); edit the original, not this file\n"
EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "hipify",
        help="translate CUDA to HIP, with the warp fixes hipify lacks and an honest report",
        description=__doc__,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help=".cu/.cuh/.py files or directories")
    p.add_argument("-o", "--output", metavar="DIR", help="write results under DIR "
                   "(default: beside each input)")
    p.add_argument("--inplace", action="store_true",
                   help=f"replace the inputs (a backup is kept as *{BACKUP_SUFFIX})")
    p.add_argument("--check", action="store_true",
                   help="compile the original with nvcc and the HIP result with hipcc "
                   "for gfx90a and gfx1030")
    p.add_argument("--targets", default="gfx90a,gfx1030",
                   help="hipcc --offload-arch targets for --check (default: gfx90a,gfx1030)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--embedded", choices=("sidecar", "rewrite"), default="sidecar",
                   help="CUDA strings in Python: write a .hip sidecar (default) or rewrite "
                   "the literal in the Python file (needs --inplace or -o)")
    p.add_argument("--engine", default="auto",
                   choices=("auto", "hipify-perl", "hipify-clang", "torch", "builtin"),
                   help="API renaming engine (auto: hipify-perl, hipify-clang, torch, builtin)")
    p.add_argument("--warp-size", type=int, choices=(32, 64), default=None,
                   help="pin PORTAGPU_WARP_SIZE instead of the per-target wavefront size")
    p.add_argument("--header", choices=("inline", "include", "none"), default="inline",
                   help="how portagpu_hip_compat.h reaches the result (default: inline)")
    p.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    p.set_defaults(func=run)


@dataclass
class FileResult:
    path: str
    kind: str  # cuda | python
    outputs: list[str] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)  # one per translated source
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "outputs": self.outputs,
                "sources": self.sources, "error": self.error, "notes": self.notes}


# --- discovery -------------------------------------------------------------------

def discover(paths: list[str]) -> tuple[list[tuple[Path, Path]], list[str]]:
    """(file, root it was found under) for each input, and errors for bad paths."""
    found: list[tuple[Path, Path]] = []
    errors: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append((path, path.parent))
        elif path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                                     and not d.startswith("."))
                for name in sorted(filenames):
                    if name.endswith(CUDA_SUFFIXES) or name.endswith(PYTHON_SUFFIX):
                        found.append((Path(dirpath) / name, path))
        else:
            errors.append(f"{raw}: no such file or directory")
    return found, errors


def output_path(src: Path, root: Path, out_dir: str | None, inplace: bool) -> Path:
    if inplace:
        return src
    name = src.name
    if out_dir is None:
        if name.endswith(".cuh"):
            return src.with_name(name[:-4] + ".hip.cuh")
        return src.with_name(_strip_cuda_suffix(name) + ".hip")
    rel = src.relative_to(root) if src.is_relative_to(root) else Path(src.name)
    target = Path(out_dir) / rel
    if name.endswith(".cuh"):
        return target  # headers keep their names so #include lines still resolve
    return target.with_name(_strip_cuda_suffix(name) + ".hip")


def _strip_cuda_suffix(name: str) -> str:
    for suffix in (".cu.cc", ".cu"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


# --- writing -----------------------------------------------------------------------

class WriteRefused(Exception):
    pass


def atomic_write(path: Path, text: str, *, backup: bool = False,
                 may_replace_generated_only: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        if backup:
            saved = path.with_name(path.name + BACKUP_SUFFIX)
            if saved.exists():
                raise WriteRefused(f"{path}: backup {saved.name} already exists (translated "
                                   "before?); remove it to translate again")
            saved.write_bytes(path.read_bytes())
        elif may_replace_generated_only:
            head = path.read_text(encoding="utf-8", errors="replace")[:200]
            if "portagpu hipify: generated" not in head:
                raise WriteRefused(f"{path}: exists and was not written by portagpu hipify; "
                                   "not overwritten (use -o DIR)")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x}); skipped") from None


# --- one file ------------------------------------------------------------------------

def _source_entry(translation: Any, origin: str, line: int | None = None) -> dict[str, Any]:
    entry = {"origin": origin, **translation.report.to_dict()}
    if line is not None:
        entry["line"] = line
    return entry


def _shift(report_items: list[dict[str, Any]], first_line: int) -> None:
    """Embedded sources: report Python lines (the literal's first line + offset)."""
    for item in report_items:
        item["line"] = item["line"] + first_line - 1


def hipify_cuda_file(src: Path, root: Path, args: argparse.Namespace) -> FileResult:
    from portagpu.cuda.analysis import ensure_parseable
    from portagpu.cuda.unit import CudaUnit
    from portagpu.hipify_bridge import translate

    result = FileResult(str(src), "cuda")
    text = read_text(src)
    try:
        ensure_parseable(CudaUnit(text))
    except Exception as exc:  # ParseFailure
        raise ValueError(f"{src}:{getattr(exc, 'line', 1)}: {exc}; skipped") from None
    tr = translate(text, warp_size=args.warp_size, engine=args.engine, header=args.header)
    out = output_path(src, root, args.output, args.inplace)
    body = MARKER.format(name=src.name, engine=tr.engine) + tr.text
    entry = _source_entry(tr, str(src))
    result.sources.append(entry)
    if not args.dry_run:
        atomic_write(out, body, backup=args.inplace, may_replace_generated_only=not args.inplace)
        if args.header == "include":
            _copy_header(out.parent)
        result.outputs.append(str(out))
    if args.check:
        original = str(src.with_name(src.name + BACKUP_SUFFIX)) if args.inplace else str(src)
        if args.dry_run:
            hip_path = os.path.join(args.scratch, f"{len(args.pending)}-{out.name}")
            Path(hip_path).write_text(body, encoding="utf-8")
        else:
            hip_path = str(out)
        # compiled after every file is written, so translated headers are in place
        args.pending.append((entry, original, hip_path, body, [str(src.parent)]))
    return result


def _copy_header(directory: Path) -> None:
    from portagpu.hipify_bridge.translation import HEADER_NAME, compat_header

    target = directory / HEADER_NAME
    if not target.exists():
        atomic_write(target, compat_header())


def _targets(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(t.strip() for t in args.targets.split(",") if t.strip())


def hipify_python_file(src: Path, root: Path, args: argparse.Namespace) -> FileResult | None:
    import ast

    from portagpu.cuda.embedded import SOURCE_ARGS, find_sources
    from portagpu.cuda.unit import DEFAULT_GUARD_MACROS
    from portagpu.hipify_bridge import translate
    from portagpu.hipify_bridge.pyrewrite import (
        new_literal,
        replace_spans,
        single_token,
        verify_python,
    )

    text = read_text(src)
    if not any(name in text for name in SOURCE_ARGS):
        return None
    try:
        tree = ast.parse(text, filename=str(src))
    except SyntaxError as exc:
        raise ValueError(f"{src}:{exc.lineno}: Python syntax error ({exc.msg}); skipped") from None
    result = FileResult(str(src), "python")
    lines = text.splitlines(keepends=True)
    replacements: list[tuple[ast.AST, str]] = []
    seen_literals: set[int] = set()
    for source in find_sources(text, tree):
        line = source.call.lineno
        where = f"{src}:{line} {source.callee}({source.argument}=...)"
        if not source.whole:
            result.notes.append(f"{where}: ElementwiseKernel/ReductionKernel fragment; "
                                "checked by `portagpu lint`, not translated")
            continue
        if source.mapped.unknown:
            parts = ", ".join(expr for _, expr in source.mapped.unknown[:4])
            result.notes.append(f"{where}: built at run time ({parts}); not translated")
            continue
        if any(macro in source.mapped.text for macro in DEFAULT_GUARD_MACROS):
            result.notes.append(f"{where}: already guarded for HIP; left as is")
            continue
        tr = translate(source.mapped.text, warp_size=args.warp_size, engine=args.engine,
                       header="inline" if args.header != "none" else "none")
        entry = _source_entry(tr, where, line)
        first = next((p for p in source.mapped.pos if p is not None), (line, 1))
        _shift(entry["warp_rewrites"], first[0])
        _shift(entry["unconverted"], first[0])
        result.sources.append(entry)
        if args.embedded == "rewrite":
            literal = source.literal
            old = single_token(lines, literal) if literal is not None else None
            if old is None:
                entry["rewritten"] = False
                result.notes.append(f"{where}: not a single string literal; wrote nothing for "
                                    "it (use --embedded sidecar)")
                continue
            if id(literal) not in seen_literals:
                seen_literals.add(id(literal))
                replacements.append((literal, new_literal(old, tr.text)))
            entry["rewritten"] = True
        elif not args.dry_run:
            stem = src.name[:-3]
            name = f"{stem}.{source.callee}_L{line}.hip"
            out = (Path(args.output) / src.relative_to(root).parent / name
                   if args.output and src.is_relative_to(root) else src.with_name(name))
            atomic_write(out, MARKER.format(name=f"{src.name}:{line}", engine=tr.engine) + tr.text,
                         may_replace_generated_only=True)
            result.outputs.append(str(out))
            entry["sidecar"] = str(out)
        if args.check:
            _check_embedded(entry, source.mapped.text, tr.text, args)
    if replacements and not args.dry_run:
        if not (args.inplace or args.output):
            raise ValueError(f"{src}: --embedded rewrite needs --inplace or -o DIR; "
                             "nothing written")
        new_text = replace_spans(text, replacements)
        verify_python(new_text, str(src))
        out = src if args.inplace else Path(args.output) / (
            src.relative_to(root) if src.is_relative_to(root) else Path(src.name))
        atomic_write(out, new_text, backup=args.inplace)
        result.outputs.append(str(out))
    return result


def _check_embedded(entry: dict[str, Any], cuda_text: str, hip_text: str,
                    args: argparse.Namespace) -> None:
    base = os.path.join(args.scratch, str(len(args.pending)))
    Path(base + ".cu").write_text(cuda_text, encoding="utf-8")
    Path(base + ".hip").write_text(hip_text, encoding="utf-8")
    args.pending.append((entry, base + ".cu", base + ".hip", hip_text, []))


def run_checks(args: argparse.Namespace) -> None:
    """Compile every pending (original, translation) pair; files side by side."""
    from concurrent.futures import ThreadPoolExecutor

    from portagpu.hipify_bridge.compile_check import check_pair

    targets = _targets(args)
    per_file = 1 + len(targets)
    workers = max(1, (os.cpu_count() or 2) // per_file)

    def one(job):
        entry, original, hip_path, hip_text, include_dirs = job
        return entry, check_pair(original, hip_path, hip_text, targets, jobs=per_file,
                                 include_dirs=include_dirs)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for entry, checks in pool.map(one, args.pending):
            entry["checks"] = [c.to_dict() for c in checks]


# --- output -----------------------------------------------------------------------------

def totals(results: list[FileResult]) -> dict[str, Any]:
    sources = [s for r in results for s in r.sources]
    checks = [c for s in sources for c in s.get("checks", [])]
    return {
        "files": len(results),
        "errors": sum(1 for r in results if r.error),
        "sources": len(sources),
        "converted_refs": sum(s["converted_refs"] for s in sources),
        "warp_rewrites": sum(len(s["warp_rewrites"]) for s in sources),
        "unconverted": sum(len(s["unconverted"]) for s in sources),
        "checks": {status: sum(1 for c in checks if c["status"] == status)
                   for status in ("ok", "failed", "not-checkable", "skipped")},
    }


def print_text(results: list[FileResult], total: dict[str, Any], out=None) -> None:
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
            print(f"  converted {s['converted_refs']} refs" + (f" ({listed}, ...)"
                  if len(s["converted"]) > 6 else f" ({listed})" if listed else ""), file=out)
            print(f"  warp rewrites: {len(s['warp_rewrites'])}", file=out)
            for w in s["warp_rewrites"]:
                print(f"    {w['line']}:{w['col']} {w['rule']} `{w['before']}` -> {w['after']}",
                      file=out)
            print(f"  not converted: {len(s['unconverted'])}", file=out)
            for u in s["unconverted"]:
                print(f"    {u['line']}:{u['col']} {u['rule']} {u['message']}", file=out)
            if s["libraries"]:
                print(f"  needs: {', '.join(s['libraries'])}", file=out)
            for w in s["warnings"]:
                print(f"  warning: {w}", file=out)
            for c in s.get("checks", []):
                detail = f": {c['detail']}" if c["detail"] else ""
                print(f"  check {c['target']}: {c['status']}{detail} ({c['seconds']:.1f} s)",
                      file=out)
        for note in res.notes:
            print(f"  note: {note}", file=out)
    checks = total["checks"]
    print(f"Total: {total['files']} files, {total['sources']} sources, "
          f"{total['converted_refs']} refs converted, {total['warp_rewrites']} warp rewrites, "
          f"{total['unconverted']} not converted, {total['errors']} errors"
          + (f"; checks: {checks['ok']} ok, {checks['failed']} failed, "
             f"{checks['not-checkable']} not checkable here, {checks['skipped']} skipped"
             if any(checks.values()) else ""), file=out)


def run(args: argparse.Namespace) -> int:
    if args.inplace and args.output:
        print("portagpu: error: --inplace and -o are exclusive", file=sys.stderr)
        return EXIT_ERROR
    args.pending = []
    scratch = tempfile.TemporaryDirectory(prefix="portagpu-hipify-")
    args.scratch = scratch.name
    try:
        return _run(args)
    finally:
        scratch.cleanup()


def _run(args: argparse.Namespace) -> int:
    files, path_errors = discover(args.paths)
    results = [FileResult(e.split(": ", 1)[0], "?", error=e) for e in path_errors]
    for src, root in files:
        try:
            if src.name.endswith(PYTHON_SUFFIX):
                res = hipify_python_file(src, root, args)
                if res is None:
                    continue
            else:
                res = hipify_cuda_file(src, root, args)
        except (ValueError, WriteRefused, OSError) as exc:
            res = FileResult(str(src), "?", error=str(exc))
        except Exception as exc:  # PortagpuError (engine missing, ...) and the unexpected
            from portagpu.errors import PortagpuError

            if not isinstance(exc, PortagpuError):
                raise
            res = FileResult(str(src), "?", error=str(exc))
        results.append(res)
    if args.pending:
        run_checks(args)
    total = totals(results)
    if args.format == "json":
        json.dump({"files": [r.to_dict() for r in results], "total": total}, sys.stdout, indent=2)
        print()
    else:
        print_text(results, total)
    if total["errors"]:
        return EXIT_ERROR
    return EXIT_FAILED if total["checks"]["failed"] else EXIT_OK
