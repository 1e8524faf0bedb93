"""`portagpu hipify PATH...` without the printing: find the inputs (with
lint's discovery), translate each .cu/.cuh file and each CUDA source embedded
in Python, write the results, then compile-check them side by side."""

from __future__ import annotations

import ast
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portagpu.hipify_bridge.writing import (
    BACKUP_SUFFIX,
    GENERATED,
    MARKER,
    WriteRefused,
    output_path,
    read_text,
    write_output,
)

from portagpu.lines import split_lines

PYTHON_SUFFIX = ".py"


@dataclass(frozen=True)
class HipifyOptions:
    output: str | None = None  # write results under this folder (default: beside each input)
    inplace: bool = False  # replace the inputs, keeping *.prehip backups
    check: bool = False  # compile the original with nvcc and the result with hipcc
    targets: tuple[str, ...] = ("gfx90a", "gfx1030")
    embedded: str = "sidecar"  # CUDA strings in Python: "sidecar" .hip files or "rewrite"
    engine: str = "auto"
    warp_size: int | None = None
    header: str = "inline"
    dry_run: bool = False


@dataclass
class FileResult:
    path: str
    kind: str  # cuda | python
    outputs: list[str] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)  # one per translated source
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "outputs": self.outputs,
            "sources": self.sources,
            "error": self.error,
            "notes": self.notes,
        }


@dataclass
class _Run:
    options: HipifyOptions
    scratch: str  # dry-run and embedded sources are compiled from here
    # (report entry, original path, HIP path, HIP text, include dirs), compiled at the end
    pending: list[tuple[dict[str, Any], str, str, str, list[str]]] = field(default_factory=list)
    inputs: set[str] = field(default_factory=set)  # real paths of every input file

    def write(self, src: Path, out: Path, text: str, **kwargs: Any) -> None:
        """write_output, refusing to replace an input unless --inplace
        writes `src` over itself (then with a .prehip backup)."""
        real = os.path.realpath(out)
        if real in self.inputs and not (self.options.inplace and real == os.path.realpath(src)):
            raise WriteRefused(
                f"{out}: would replace an input; use --inplace (keeps a {BACKUP_SUFFIX} "
                "backup) or an -o folder outside the inputs"
            )
        from portagpu.fileio import new_file_mode

        write_output(out, text, mode=new_file_mode(like=src), **kwargs)


def discover(paths: list[str]) -> tuple[list[tuple[Path, Path]], list[str]]:
    """(file, root it was found under) for each input, in walk order (a
    folder's files, then its subfolders'), and errors for bad paths. Each
    real file comes once (a symlink and its target, a file named twice), a
    FIFO or device is an error rather than a read that blocks, and hipify's
    own outputs (`*.hip.cuh`, or a file that starts with its marker) are
    not translated again."""
    from portagpu.fileio import not_regular
    from portagpu.lint import discovery

    found: list[tuple[Path, Path]] = []
    errors: list[str] = []
    seen: set[str] = set()

    def add(path: Path, root: Path, named: bool) -> None:
        real = os.path.realpath(path)
        if real not in seen and not is_generated(path, by_content=not named):
            seen.add(real)
            found.append((path, root))

    for raw in paths:
        root = Path(raw)
        try:
            st = os.stat(raw)
        except FileNotFoundError:
            errors.append(f"{raw}: no such file or directory")
            continue
        except OSError as exc:
            errors.append(f"{raw}: {exc.strerror or exc}")
            continue
        if not root.is_dir():
            why = not_regular(st.st_mode)
            if why is not None:
                errors.append(f"{raw}: {why}")
            else:
                add(root, root.parent, named=True)
            continue
        top = os.path.abspath(raw)
        files = []
        for item in discovery.discover([raw], root=Path.cwd()):
            if not isinstance(item, discovery.Candidate):
                errors.append(f"{item.path}: {item.detail}")
            elif item.language == "cuda" or item.path.endswith(PYTHON_SUFFIX):
                rel = Path(os.path.relpath(os.path.abspath(item.path), top))
                files.append((rel.parent.parts, rel.name, root / rel))
        for _, _, path in sorted(files):
            add(path, root, named=False)
    return found, errors


_OWN_OUTPUT_SUFFIXES = (".hip.cuh", ".hip.cu", ".hip.h")


def is_generated(path: Path, by_content: bool = True) -> bool:
    """One of hipify's outputs: named like one, or (by_content: found in a
    folder) starting with its marker, as an --inplace translation does. A file
    named on the command line is judged by its name only, so a second
    --inplace run on it still meets the backup that refuses it."""
    if path.name.endswith(_OWN_OUTPUT_SUFFIXES):
        return True
    if not by_content or path.name.endswith(PYTHON_SUFFIX):
        return False  # a rewritten .py carries no marker; its sources are HIP-guarded
    try:
        with open(path, "rb") as fh:
            head = fh.read(300)
    except OSError:
        return False
    return GENERATED.encode() in head


def _source_entry(translation: Any, origin: str, line: int | None = None) -> dict[str, Any]:
    entry = {"origin": origin, **translation.report.to_dict()}
    if line is not None:
        entry["line"] = line
    return entry


def _shift(report_items: list[dict[str, Any]], first_line: int) -> None:
    """Embedded sources: report Python lines (the literal's first line + offset)."""
    for item in report_items:
        item["line"] = item["line"] + first_line - 1


def hipify_cuda_file(src: Path, root: Path, run: _Run) -> FileResult:
    from portagpu.hipify_bridge.translation import translate

    from portagpu.cuda.unit import CudaUnit
    from portagpu.lint.cuda.analysis import ensure_parseable
    from portagpu.lint.model import ParseFailure

    opts = run.options
    result = FileResult(str(src), "cuda")
    text = read_text(src)
    try:
        ensure_parseable(CudaUnit(text))
    except ParseFailure as exc:
        raise ValueError(f"{src}:{exc.line}: {exc}; skipped") from None
    tr = translate(
        text, warp_size=opts.warp_size, engine=opts.engine, header=opts.header, diagnose=True
    )
    out = output_path(src, root, opts.output, opts.inplace)
    body = MARKER.format(name=src.name, engine=tr.engine) + tr.text
    entry = _source_entry(tr, str(src))
    result.sources.append(entry)
    if not opts.dry_run:
        run.write(src, out, body, backup=opts.inplace, may_replace_generated_only=not opts.inplace)
        if opts.header == "include":
            _copy_header(out.parent)
        result.outputs.append(str(out))
    if opts.check:
        original = str(src.with_name(src.name + BACKUP_SUFFIX)) if opts.inplace else str(src)
        if opts.dry_run:
            hip_path = os.path.join(run.scratch, f"{len(run.pending)}-{out.name}")
            Path(hip_path).write_text(body, encoding="utf-8")
        else:
            hip_path = str(out)
        # compiled after every file is written, so translated headers are in place
        run.pending.append((entry, original, hip_path, body, [str(src.parent)]))
    return result


def _copy_header(directory: Path) -> None:
    from portagpu.hipify_bridge.translation import HEADER_NAME, compat_header

    target = directory / HEADER_NAME
    if not target.exists():
        write_output(target, compat_header())


def hipify_python_file(src: Path, root: Path, run: _Run) -> FileResult | None:
    from portagpu.hipify_bridge.pyrewrite import (
        new_literal,
        replace_spans,
        single_token,
        verify_python,
    )
    from portagpu.hipify_bridge.translation import translate

    from portagpu.cuda.embedded import SOURCE_ARGS, find_sources
    from portagpu.cuda.unit import DEFAULT_GUARD_MACROS

    opts = run.options
    text = read_text(src)
    if not any(name in text for name in SOURCE_ARGS):
        return None
    try:
        tree = ast.parse(text, filename=str(src))
    except SyntaxError as exc:
        raise ValueError(f"{src}:{exc.lineno}: Python syntax error ({exc.msg}); skipped") from None
    result = FileResult(str(src), "python")
    lines = split_lines(text, keepends=True)
    replacements: list[tuple[ast.AST, str]] = []
    seen_literals: set[int] = set()
    for source in find_sources(text, tree):
        line = source.call.lineno
        where = f"{src}:{line} {source.callee}({source.argument}=...)"
        if not source.whole:
            result.notes.append(
                f"{where}: ElementwiseKernel/ReductionKernel fragment; "
                "checked by `portagpu lint`, not translated"
            )
            continue
        if source.mapped.unknown:
            parts = ", ".join(expr for _, expr in source.mapped.unknown[:4])
            result.notes.append(f"{where}: built at run time ({parts}); not translated")
            continue
        if any(macro in source.mapped.text for macro in DEFAULT_GUARD_MACROS):
            result.notes.append(f"{where}: already guarded for HIP; left as is")
            continue
        tr = translate(
            source.mapped.text,
            warp_size=opts.warp_size,
            engine=opts.engine,
            header="inline" if opts.header != "none" else "none",
            diagnose=True,
        )
        entry = _source_entry(tr, where, line)
        first = next((p for p in source.mapped.pos if p is not None), (line, 1))
        _shift(entry["warp_rewrites"], first[0])
        _shift(entry["unconverted"], first[0])
        result.sources.append(entry)
        if opts.embedded == "rewrite":
            literal = source.literal
            old = single_token(lines, literal) if literal is not None else None
            if old is None:
                entry["rewritten"] = False
                result.notes.append(
                    f"{where}: not a single string literal; wrote nothing for "
                    "it (use --embedded sidecar)"
                )
                continue
            if id(literal) not in seen_literals:
                seen_literals.add(id(literal))
                replacements.append((literal, new_literal(old, tr.text)))
            entry["rewritten"] = True
        elif not opts.dry_run:
            stem = src.name[:-3]
            name = f"{stem}.{source.callee}_L{line}.hip"
            out = (
                Path(opts.output) / src.relative_to(root).parent / name
                if opts.output and src.is_relative_to(root)
                else src.with_name(name)
            )
            run.write(
                src,
                out,
                MARKER.format(name=f"{src.name}:{line}", engine=tr.engine) + tr.text,
                may_replace_generated_only=True,
            )
            result.outputs.append(str(out))
            entry["sidecar"] = str(out)
        if opts.check:
            _check_embedded(entry, source.mapped.text, tr.text, run)
    if replacements and not opts.dry_run:
        if not (opts.inplace or opts.output):
            raise ValueError(
                f"{src}: --embedded rewrite needs --inplace or -o DIR; nothing written"
            )
        new_text = replace_spans(text, replacements)
        verify_python(new_text, str(src))
        out = (
            src
            if opts.inplace
            else Path(opts.output)
            / (src.relative_to(root) if src.is_relative_to(root) else Path(src.name))
        )
        run.write(src, out, new_text, backup=opts.inplace)
        result.outputs.append(str(out))
    return result


def _check_embedded(entry: dict[str, Any], cuda_text: str, hip_text: str, run: _Run) -> None:
    base = os.path.join(run.scratch, str(len(run.pending)))
    Path(base + ".cu").write_text(cuda_text, encoding="utf-8")
    Path(base + ".hip").write_text(hip_text, encoding="utf-8")
    run.pending.append((entry, base + ".cu", base + ".hip", hip_text, []))


def run_checks(run: _Run) -> None:
    """Compile every pending (original, translation) pair; files side by side."""
    from concurrent.futures import ThreadPoolExecutor

    from portagpu.hipify_bridge.compile_check import check_pair

    targets = run.options.targets
    per_file = 1 + len(targets)
    workers = max(1, (os.cpu_count() or 2) // per_file)

    def one(job):
        entry, original, hip_path, hip_text, include_dirs = job
        return entry, check_pair(
            original, hip_path, hip_text, targets, jobs=per_file, include_dirs=include_dirs
        )

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for entry, checks in pool.map(one, run.pending):
            entry["checks"] = [c.to_dict() for c in checks]


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
        "checks": {
            status: sum(1 for c in checks if c["status"] == status)
            for status in ("ok", "failed", "not-checkable", "skipped")
        },
    }


def hipify_paths(paths: list[str], options: HipifyOptions) -> list[FileResult]:
    """Translate every CUDA file and embedded CUDA source under `paths`; a
    file that cannot be translated is a FileResult with `error` set."""
    from portagpu.errors import PortagpuError

    with tempfile.TemporaryDirectory(prefix="portagpu-hipify-") as scratch:
        run = _Run(options, scratch)
        files, path_errors = discover(paths)
        run.inputs = {os.path.realpath(src) for src, _ in files}
        results = [FileResult(e.split(": ", 1)[0], "?", error=e) for e in path_errors]
        for src, root in files:
            try:
                if src.name.endswith(PYTHON_SUFFIX):
                    res = hipify_python_file(src, root, run)
                    if res is None:
                        continue
                else:
                    res = hipify_cuda_file(src, root, run)
            except (ValueError, WriteRefused, OSError, PortagpuError) as exc:
                res = FileResult(str(src), "?", error=str(exc))
            results.append(res)
        if run.pending:
            run_checks(run)
    return results
