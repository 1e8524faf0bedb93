"""`portagpu lint [PATHS]`: shaped like `ruff check`.

Exit status: 0 no findings, 1 findings (or fixes that --diff would make),
2 a usage, configuration or internal error."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(raw: str) -> list[str]:
    return [c.strip().upper() for c in raw.split(",") if c.strip()]


def _patterns(raw: str) -> list[str]:
    return [p.strip() for p in raw.split(",") if p.strip()] or [raw]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "lint",
        help="find CUDA-only idioms that break on ROCm, MPS or CPU",
        description="Lint Python and CUDA sources for code that breaks off NVIDIA GPUs. "
        "Configure in [tool.portagpu.lint] of pyproject.toml; see `portagpu rules`.",
    )
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or folders (default: .)")
    p.add_argument("--select", type=_codes, metavar="CODES", help="only these codes/prefixes (replaces the config's)")
    p.add_argument("--extend-select", type=_codes, default=[], metavar="CODES", help="codes/prefixes to add")
    p.add_argument("--ignore", type=_codes, default=[], metavar="CODES", help="codes/prefixes to leave out")
    p.add_argument("--target", metavar="TARGETS", help="where the code must run: comma list of rocm,mps,cpu (default: all)")
    p.add_argument("--output-format", "--format", dest="format", choices=("text", "grouped", "json", "sarif", "github"),
                   default="text", help="report format (--format is an older spelling)")
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--statistics", action="store_true", help="an inventory: count per code, with its status per target")
    p.add_argument("--fix", action="store_true", help="apply safe fixes (suggestions only with --unsafe-fixes)")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, also apply the suggestions that carry an edit")
    p.add_argument("--diff", action="store_true", help="show the safe fixes as a unified diff; write nothing")
    p.add_argument("--show-fixes", action="store_true", help="show each finding's fix or suggestion")
    p.add_argument("--add-noqa", action="store_true", help="add `# noqa: CODE` for every finding (baseline)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write .portagpu_cache/")
    p.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes (default: every core)")
    p.add_argument("--config", type=Path, metavar="PYPROJECT", help="use this pyproject.toml")
    p.add_argument("--isolated", action="store_true", help="read no configuration file (defaults and this command line only)")
    p.add_argument("--exclude", type=_patterns, metavar="PATTERNS", help="comma list of gitignore-style patterns; replaces the config's `exclude`")
    p.add_argument("--extend-exclude", type=_patterns, default=[], metavar="PATTERNS", help="patterns to exclude as well")
    p.add_argument("--per-file-ignores", action="append", metavar="PATTERN:CODES", help="e.g. 'tests/*:PG1' (repeatable); replaces the config's table")
    p.add_argument("--extend-per-file-ignores", action="append", default=[], metavar="PATTERN:CODES", help="per-file ignores to add to the config's")
    p.add_argument("--stdin-filename", metavar="PATH", help="lint standard input as if it were PATH (editors); with --fix, print the fixed source")
    p.add_argument("--force-exclude", action="store_true", help="apply exclude/.gitignore to paths named here too (pre-commit)")
    p.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    p.set_defaults(func=run)


class _Progress:
    """`linting 120/556` on stderr, only on a TTY and only for long runs."""

    def __init__(self, enabled: bool) -> None:
        import time

        self.enabled, self.clock, self.start, self.shown = enabled, time.monotonic, time.monotonic(), False

    def __call__(self, done: int, total: int) -> None:
        if self.enabled and self.clock() - self.start > 0.5:
            sys.stderr.write(f"\rportagpu: linting {done}/{total} files")
            sys.stderr.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _colour(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _diff(changed: dict[str, tuple[str, str]]) -> str:
    import difflib

    from portagpu.lines import split_lines

    parts = []
    for path, (old, new) in sorted(changed.items()):
        parts.append(
            "".join(
                difflib.unified_diff(
                    split_lines(old, keepends=True), split_lines(new, keepends=True), f"a/{path}", f"b/{path}"
                )
            )
        )
    return "".join(parts)


def run(args: argparse.Namespace) -> int:
    """Exit 2 on an internal error too, with one line (PORTAGPU_DEBUG=1: traceback)."""
    from portagpu.errors import PortagpuError

    try:
        return _run(args)
    except (PortagpuError, KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as exc:
        if os.environ.get("PORTAGPU_DEBUG"):
            raise
        print(f"portagpu: internal error: {type(exc).__name__}: {exc} (PORTAGPU_DEBUG=1 shows where)", file=sys.stderr)
        return EXIT_ERROR


def _run(args: argparse.Namespace) -> int:
    from portagpu.errors import ConfigError
    from portagpu.lint.config import LintConfig, load_config, with_overrides
    from portagpu.lint.engine import lint_paths

    if args.fix and args.diff:
        args.fix = True  # --fix --diff: show what would change, like ruff
    if args.add_noqa and (args.fix or args.diff):
        raise ConfigError("--add-noqa cannot be combined with --fix or --diff")
    # the config is found from the first path (standard input: the name it stands for)
    start = Path(args.stdin_filename or (args.paths[0] if args.paths else "."))
    if args.isolated:
        config = LintConfig(root=Path.cwd(), source="--isolated", cache=not args.no_cache)
    else:
        config = load_config(
            start if start.is_dir() else start.parent, config_file=args.config, cache=not args.no_cache
        )
    config = with_overrides(
        config,
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        targets=args.target.split(",") if args.target else None,
        cache=False if args.no_cache else None,
        jobs=args.jobs,
        exclude=args.exclude,
        extend_exclude=args.extend_exclude,
        per_file_ignores=args.per_file_ignores,
        extend_per_file_ignores=args.extend_per_file_ignores,
    )
    if args.force_exclude:
        config = replace(config, force_exclude=True)
    _check_report_path(args.output_file)
    if args.stdin_filename or args.paths == ["-"]:
        result, source = _stdin(args, config)
    else:
        if "-" in args.paths:
            raise ConfigError("`-` (standard input) cannot be combined with other paths")
        progress = _Progress(sys.stderr.isatty() and not args.quiet)
        for path in args.paths:
            if not os.path.lexists(path):
                raise ConfigError(f"{path}: no such file or folder")
        result = lint_paths(
            args.paths,
            config,
            fix=args.fix or args.diff,
            unsafe_fixes=args.unsafe_fixes,
            write=not args.diff,
            add_noqa_comments=args.add_noqa,
            progress=progress,
        )
        progress.clear()
        source = None
    return _report(args, config, result, source)


def _check_report_path(path: str | None) -> None:
    """-o is checked before anything is linted or written, so a typo does not
    cost a whole run (or leave fixes written and no report)."""
    from portagpu.errors import ConfigError

    if path is None:
        return
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise ConfigError(f"{path}: cannot write the report: is a folder")
    if not folder.is_dir():
        raise ConfigError(f"{path}: cannot write the report: no folder {folder}")
    if not os.access(target if target.exists() else folder, os.W_OK):
        raise ConfigError(f"{path}: cannot write the report: permission denied")


def _report(args: argparse.Namespace, config, result, source: bytes | None) -> int:
    """Prints the report and picks the exit code. `source`: standard input's
    text after --fix/--add-noqa, which then owns stdout (the report goes to
    stderr, as ruff does, unless -o names a file)."""
    from portagpu.errors import ConfigError
    from portagpu.lint import report

    if source is not None:
        sys.stdout.flush()
        if hasattr(sys.stdout, "buffer"):
            sys.stdout.buffer.write(source)
        else:  # a text-only stream (an embedding program, a test)
            sys.stdout.write(source.decode("utf-8", "replace"))
        sys.stdout.flush()
    default = sys.stderr if source is not None else sys.stdout
    try:
        out = open(args.output_file, "w", encoding="utf-8") if args.output_file else default  # noqa: SIM115
    except OSError as exc:
        raise ConfigError(f"{args.output_file}: cannot write the report: {exc.strerror}") from None
    try:
        style = report.Style(_colour(out) and args.format in ("text", "grouped"))
        _emit(args, config, result, report, style, out)
    finally:
        if out is not default:
            out.close()

    for warning in result.warnings:
        print(f"portagpu: warning: {warning}", file=sys.stderr)
    for missing in result.missing_checkers:
        print(f"portagpu: warning: the {missing} checkers are not installed; their rules did not run", file=sys.stderr)
    for error in result.errors:
        print(f"portagpu: error: {error}", file=sys.stderr)
    if args.add_noqa:
        if not args.quiet:
            print(f"Added {result.noqa_added} noqa directive(s) in {len(result.changed)} file(s).", file=sys.stderr)
        return EXIT_FINDINGS if result.errors else EXIT_OK
    if args.exit_zero:
        return EXIT_OK
    if args.diff:
        return EXIT_FINDINGS if result.changed or result.errors else EXIT_OK
    return result.exit_code


def _stdin(args: argparse.Namespace, config):
    """Standard input linted as the file --stdin-filename (or `-`): read as
    bytes, so a BOM or a PEP 263 coding is honoured as in a file. Returns the
    Result and, for --fix/--add-noqa, the new source in its own encoding."""
    from portagpu.lint import meta
    from portagpu.lint.engine import Result, lint_one
    from portagpu.lint.fixes import encoding_for
    from portagpu.lint.source import Undecodable, decode_source, language_of
    from portagpu.lint.suppression import add_noqa

    name = args.stdin_filename or "-"
    language = language_of(name) or "python"
    stream = sys.stdin
    data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8", "surrogateescape")
    rules = config.rules()
    result = Result(rules=rules, files=1, parsed=1)
    text = decode_source(data, language)
    if isinstance(text, Undecodable):
        by_id = {r.id: r for r in rules}
        found = meta.meta_finding(text.code, name, text.detail, line=text.line, col=text.col, rules=by_id)
        result.findings = [found] if found.code in by_id else []
        return result, (data if args.fix or args.add_noqa else None)
    outcome = lint_one(text, name, config, fix=args.fix or args.diff, unsafe_fixes=args.unsafe_fixes)
    result.findings = outcome.findings
    if outcome.error:
        result.errors.append(f"{name}: {outcome.error}")
    new_text = text
    if outcome.new_text is not None:
        new_text = outcome.new_text
        result.fixed, result.fixed_by_path[name] = outcome.fixed, outcome.fixed
        result.changed[name] = (text, new_text)
    if args.add_noqa:
        todo = [f for f in result.findings if f.code not in meta.META_CODES]
        new_text = add_noqa(text, todo, language)
        result.findings = [f for f in result.findings if f.code in meta.META_CODES]
        if new_text != text:
            result.noqa_added = len({(f.line, f.code) for f in todo})
            result.changed[name] = (text, new_text)
    if not (args.fix or args.add_noqa) or args.diff:
        return result, None
    try:
        return result, new_text.encode(encoding_for(data, language))
    except (UnicodeEncodeError, LookupError) as exc:
        result.errors.append(f"{name}: fixed text cannot be written in its encoding: {exc}")
        return result, data


def _emit(args, config, result, report, style, out) -> None:
    findings = result.findings
    if args.diff:
        out.write(_diff(result.changed))
        if not args.quiet:
            print(f"Would fix {result.fixed} finding(s) in {len(result.changed)} file(s).", file=sys.stderr)
        return
    if args.statistics:
        rows = report.statistics(findings, result.rules, config.targets)
        if args.format == "json":
            import json

            out.write(json.dumps(rows, indent=2) + "\n")
        elif rows:
            out.write(report.format_statistics(rows, config.targets, style) + "\n")
        return
    if args.format == "json":
        out.write(report.format_json(findings, result.rules) + "\n")
    elif args.format == "sarif":
        out.write(report.format_sarif(findings, result.rules, result.errors) + "\n")
    elif args.format == "github":
        if findings:
            out.write(report.format_github(findings) + "\n")
    else:
        formatter = report.format_grouped if args.format == "grouped" else report.format_text
        if findings:
            out.write(formatter(findings, style, show_fixes=args.show_fixes) + "\n")
        if not args.quiet and not args.add_noqa:
            _summary(args, result, style, out)


def _summary(args, result, style, out) -> None:
    findings = result.findings
    fixable = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe" and f.fix.edits)
    if args.fix and result.fixed:
        if args.show_fixes:
            for path, count in sorted(result.fixed_by_path.items()):
                out.write(f"  {style.bold(path)}: {count} fix(es) applied\n")
        out.write(f"Fixed {result.fixed} finding(s) in {len(result.changed)} file(s).\n")
    if findings:
        out.write(f"Found {len(findings)} finding(s) in {len({f.path for f in findings})} file(s).\n")
        if fixable and not args.fix:
            out.write(f"{style.cyan('[*]')} {fixable} fixable with `portagpu lint --fix`.\n")
        hidden = sum(1 for f in findings if f.fix is not None and f.fix.applicability != "safe" and f.fix.edits)
        if hidden and not args.unsafe_fixes:
            out.write(f"({hidden} more fixable with `--fix --unsafe-fixes`: suggestions, review them.)\n")
    elif not (args.fix and result.fixed):
        out.write(f"{style.green('All checks passed!')} ({result.files} file{'' if result.files == 1 else 's'})\n")
