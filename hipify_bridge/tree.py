"""`portagpu hipify PATH...` without the printing: find the inputs (with
lint's discovery), translate each .cu/.cuh file and each CUDA source embedded
in Python, write the results, then compile-check them side by side."""

from __future__ import annotations

import ast
import os
import re
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
    include_dirs: tuple[str, ...] = ()  # -I: where `#include` finds the project's headers
    defines: tuple[str, ...] = ()  # -D for the --check compiles
    std: str | None = None  # --std for the --check compiles (default c++17)
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
    headers: list[str] = field(default_factory=list)  # a unit's header closure
    included_by: list[str] = field(default_factory=list)  # a header's includers
    hip_include_dirs: list[str] | None = None  # -I dirs that compile the translation

    def to_dict(self) -> dict[str, Any]:
        out = {
            "path": self.path,
            "kind": self.kind,
            "outputs": self.outputs,
            "sources": self.sources,
            "error": self.error,
            "notes": self.notes,
        }
        if self.kind in ("cuda", "header"):
            out["headers"] = self.headers
            out["included_by"] = self.included_by
        if self.hip_include_dirs is not None:
            out["hip_include_dirs"] = self.hip_include_dirs
        return out


@dataclass
class _Check:
    """One original/translation pair to compile once everything is written."""

    entry: dict[str, Any]  # the report entry the results go to
    original: str | None
    hip_path: str
    hip_text: str
    cuda_flags: Any  # compile_check.CompileFlags for nvcc
    hip_flags: Any  # and for hipcc
    locate: Any = None  # (hip path, line) -> (original path, line) | None


@dataclass
class _Run:
    options: HipifyOptions
    scratch: str  # dry-run and embedded sources are compiled from here
    pending: list[_Check] = field(default_factory=list)
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


def _compile_flags(
    include_dirs: list[str] | tuple[str, ...], defines: tuple[str, ...], std: str | None
) -> Any:
    from portagpu.hipify_bridge.compile_check import CompileFlags

    return CompileFlags(tuple(include_dirs), tuple(defines), std or "c++17")


def hipify_cuda_units(inputs: list[tuple[Path, Path]], run: _Run) -> list[FileResult]:
    """Translate .cu/.cuh inputs with the local headers they include: one warp
    model per function over the whole set, translated headers written into the
    output tree, include lines pointed at them."""
    from portagpu.hipify_bridge.units import BuildFlags, UnitSet
    from portagpu.hipify_bridge.warp_model import choose_models

    from portagpu.cuda.unit import CudaUnit
    from portagpu.lint.cuda.analysis import ensure_parseable
    from portagpu.lint.model import ParseFailure

    opts = run.options
    units = UnitSet(
        inputs,
        BuildFlags(tuple(os.path.abspath(d) for d in opts.include_dirs), opts.defines, opts.std),
    )
    results: dict[Path, FileResult] = {}
    parsed: dict[Path, CudaUnit] = {}
    for path in units.order:
        source = units.files[path]
        res = FileResult(str(source.shown), "cuda" if source.is_unit else "header")
        results[path] = res
        if source.error:
            res.error = source.error
            continue
        unit = CudaUnit(source.text)
        try:
            ensure_parseable(unit)
        except ParseFailure as exc:
            res.error = f"{source.shown}:{exc.line}: {exc}; skipped"
            continue
        parsed[path] = unit
    models = choose_models({str(p): u for p, u in parsed.items()})
    translations = {}
    for path in parsed:
        from portagpu.hipify_bridge.translation import translate

        translations[path] = translate(
            units.files[path].text,
            warp_size=opts.warp_size,
            engine=opts.engine,
            header=opts.header,
            diagnose=True,
            models=models,
            key=str(path),
        )
    layout = _Layout(units, translations, opts, run.scratch)
    for path, tr in translations.items():
        source, res = units.files[path], results[path]
        res.sources.append(_source_entry(tr, str(source.shown)))
        res.headers = [str(units.files[p].shown) for p in _closure(units, path)]
        res.included_by = [str(units.files[p].shown) for p in source.included_by]
        out = layout.output(path)
        if out is None:  # a header nothing changed: its includers keep using it
            res.notes.append("no CUDA to translate; used as it is")
            continue
        body = MARKER.format(name=path.name, engine=tr.engine) + layout.text(path)
        try:
            if layout.writes:
                run.write(
                    path, out, body, backup=opts.inplace, may_replace_generated_only=not opts.inplace
                )
                if opts.header == "include":
                    _copy_header(out.parent)
                if not opts.dry_run:
                    res.outputs.append(str(out))
        except (WriteRefused, OSError) as exc:
            res.error = str(exc)
            continue
        if opts.check and source.is_unit:
            original = str(path.with_name(path.name + BACKUP_SUFFIX)) if opts.inplace else str(path)
            hip_dirs = [str(out.parent), *layout.include_dirs(source.flags.include_dirs)]
            res.hip_include_dirs = hip_dirs
            run.pending.append(
                _Check(
                    res.sources[0],
                    original,
                    str(out),
                    body,
                    _compile_flags(
                        [str(path.parent), *source.flags.include_dirs],
                        source.flags.defines,
                        source.flags.std,
                    ),
                    _compile_flags(hip_dirs, source.flags.defines, source.flags.std),
                    layout.locate,
                )
            )
        elif source.is_unit:
            res.hip_include_dirs = [
                str(out.parent),
                *layout.include_dirs(source.flags.include_dirs),
            ]
    return [results[p] for p in units.order]


def _closure(units: Any, path: Path) -> list[Path]:
    seen, stack = [], [path]
    while stack:
        for *_, target in units.files[stack.pop()].includes:
            if target not in seen and target != path:
                seen.append(target)
                stack.append(target)
    return seen


class _Layout:
    """Where each translation goes and how include lines reach translated headers.

    -o DIR: the tree under DIR mirrors the input folder (its parent when headers
    come from outside it); every header of a unit is written there (copied when
    it holds no CUDA), so include lines and -I dirs keep working, -I mapped.
    Beside the inputs: a changed header `x.h` becomes `x.hip.h` and the include
    lines that name it are rewritten; unchanged headers are used as they are.
    --inplace: files are replaced (backups kept); include lines stay.
    """

    def __init__(
        self, units: Any, translations: dict[Path, Any], opts: HipifyOptions, scratch: str
    ) -> None:
        self.units, self.translations, self.opts = units, translations, opts
        self.out_dir = opts.output
        if opts.dry_run:
            self.out_dir = os.path.join(scratch, "tree") if opts.check else None
        self.writes = not opts.dry_run or opts.check
        self.changed = self._changed()
        self.bases = {root: units.base_of(root) for root in {f.root for f in units.files.values()}}
        self.outputs: dict[Path, Path] = {}
        for path in translations:
            out = self._output(path)
            if out is not None:
                self.outputs[path] = out
        self.reverse = {os.path.abspath(out): path for path, out in self.outputs.items()}

    def _changed(self) -> set[Path]:
        changed = {
            p
            for p, tr in self.translations.items()
            if self.units.files[p].is_unit or tr.text != self.units.files[p].text
        }
        grew = True
        while grew:  # a header that includes a changed header changes too (its include line)
            grew = False
            for path in self.translations:
                if path not in changed and any(
                    t in changed for *_, t in self.units.files[path].includes
                ):
                    changed.add(path)
                    grew = True
        return changed

    def _output(self, path: Path) -> Path | None:
        source = self.units.files[path]
        if self.opts.inplace and not self.opts.dry_run:
            return path if path in self.changed else None
        if self.out_dir is None:
            if path not in self.changed:
                return None
            return (
                output_path(source.path, source.root, None, False)
                if source.is_unit
                else (path.with_name(hip_header_name(path.name)))
            )
        base = self.bases[source.root]
        return (
            output_path(source.path, base, self.out_dir, False)
            if source.is_unit
            else (Path(self.out_dir) / path.relative_to(base))
        )

    def output(self, path: Path) -> Path | None:
        return self.outputs.get(path)

    def text(self, path: Path) -> str:
        """The translation with local include lines naming what the includer will find."""
        tr = self.translations[path]
        source = self.units.files[path]
        wanted: dict[int, tuple[str, str]] = {}
        for start, _end, spelling, target in source.includes:
            line = source.text.encode("utf-8", "surrogatepass")[:start].count(b"\n") + 1
            new = spelling
            if self.out_dir is None and not self.opts.inplace and target in self.changed:
                new = str(Path(spelling).with_name(hip_header_name(Path(spelling).name)))
            wanted[line] = (spelling, new)
        return rewrite_includes(tr.text, tr.line_map, wanted)

    def include_dirs(self, dirs: tuple[str, ...]) -> list[str]:
        """The -I dirs that find the translated headers."""
        if self.out_dir is None:
            return list(dirs)
        out = []
        for d in dirs:
            real = Path(d).resolve()
            base = next((b for b in self.bases.values() if real.is_relative_to(b)), None)
            out.append(str(Path(self.out_dir) / real.relative_to(base)) if base else d)
        return out

    def locate(self, hip_path: str, line: int) -> tuple[str, int] | None:
        """An output file's line -> (the original file, its line)."""
        path = self.reverse.get(os.path.abspath(hip_path))
        if path is None:
            return None
        original = self.translations[path].original_line(line - 1)  # the marker line
        return (str(self.units.files[path].shown), original) if original else None


def hip_header_name(name: str) -> str:
    """x.cuh -> x.hip.cuh, x.h -> x.hip.h, x -> x.hip (beside the original)."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.hip.{ext}" if dot and stem else f"{name}.hip"


def rewrite_includes(text: str, line_map: list[int], wanted: dict[int, tuple[str, str]]) -> str:
    """Give each output line that came from an include line of the input the
    spelling wanted (the engine may rename inside it; a local header must keep
    its name, or take its translated name)."""
    from portagpu.hipify_bridge.units import INCLUDE_LINE

    if not wanted:
        return text
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        origin = line_map[i] if i < len(line_map) else 0
        if origin not in wanted:
            continue
        encoded = line.encode("utf-8", "surrogatepass")
        match = INCLUDE_LINE.match(encoded)
        if match is None:
            continue
        new = wanted[origin][1].encode("utf-8")
        lines[i] = (encoded[: match.start(2)] + new + encoded[match.end(2) :]).decode(
            "utf-8", "surrogatepass"
        )
    return "".join(lines)


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
    flags = _compile_flags([], run.options.defines, run.options.std)
    run.pending.append(_Check(entry, base + ".cu", base + ".hip", hip_text, flags, flags))


def run_checks(run: _Run) -> None:
    """Compile every pending (original, translation) pair; files side by side.
    A compiler error inside a translation names the original file and line too."""
    from concurrent.futures import ThreadPoolExecutor

    from portagpu.hipify_bridge.compile_check import check_pair

    targets = run.options.targets
    per_file = 1 + len(targets)
    workers = max(1, (os.cpu_count() or 2) // per_file)

    def one(job: _Check):
        return job, check_pair(
            job.original,
            job.hip_path,
            job.hip_text,
            targets,
            jobs=per_file,
            cuda_flags=job.cuda_flags,
            hip_flags=job.hip_flags,
        )

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for job, checks in pool.map(one, run.pending):
            job.entry["checks"] = [_located(c.to_dict(), job.locate) for c in checks]


_COMPILER_AT = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?")


def _located(check: dict[str, Any], locate: Any) -> dict[str, Any]:
    """`out.hip:120:5: error: ...` -> also `original.cu:118`, where it came from."""
    match = _COMPILER_AT.match(check.get("detail", ""))
    if locate is None or match is None:
        return check
    found = locate(match.group("path"), int(match.group("line")))
    if found is not None:
        check["original"] = {"path": found[0], "line": found[1]}
        check["detail"] = (
            f"{found[0]}:{found[1]}: {check['detail'][match.end() :].strip()} "
            f"[{match.group('path')}:{match.group('line')}]"
        )
    return check


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
        cuda = [(src, root) for src, root in files if not src.name.endswith(PYTHON_SUFFIX)]
        if cuda:
            try:
                results += hipify_cuda_units(cuda, run)
            except PortagpuError as exc:  # an engine asked for and missing
                results += [FileResult(str(src), "?", error=str(exc)) for src, _ in cuda]
        for src, root in files:
            if not src.name.endswith(PYTHON_SUFFIX):
                continue
            try:
                res = hipify_python_file(src, root, run)
            except (ValueError, WriteRefused, OSError, PortagpuError) as exc:
                res = FileResult(str(src), "?", error=str(exc))
            if res is not None:
                results.append(res)
        if run.pending:
            run_checks(run)
    return results
