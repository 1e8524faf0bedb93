"""`[tool.portagpu.lint]` in the nearest pyproject.toml, merged with the
command line, and the rule selection it implies.

    [tool.portagpu.lint]
    select = ["PG"]                      # codes or prefixes; "ALL"; default: all
    extend-select = []
    ignore = ["PG105"]
    per-file-ignores = { "tests/*" = ["PG1"] }
    exclude = ["third_party/", "*_pb2.py"]   # gitignore-style, relative to this file
    targets = ["rocm", "mps"]            # default: rocm, mps, cpu
    guard-names = ["is_hip", "on_amd"]
    guard-macros = ["USE_ROCM"]
    extend-rules = ["lint/our_rules.yaml"]
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from portagpu._toml import load_toml as _load_toml
from portagpu.errors import ConfigError
from portagpu.lint.model import ALL_TARGETS, LintSettings, Rule

KNOWN_KEYS = {
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "targets",
    "guard-names",
    "guard-macros",
    "extend-rules",
    "respect-gitignore",
    "force-exclude",
    "cache-dir",
}


@dataclass(frozen=True)
class LintConfig:
    root: Path = field(default_factory=Path.cwd)  # patterns are relative to it
    source: str = "defaults"  # file the settings came from, for messages
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()  # --exclude replaces `exclude`, never these
    targets: tuple[str, ...] = ALL_TARGETS
    guard_names: tuple[str, ...] = ()
    guard_macros: tuple[str, ...] = ()
    extend_rules: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False  # exclude even paths named on the command line
    cache: bool = True
    cache_dir: str = ".portagpu_cache"
    jobs: int | None = None  # None: every core

    def settings(self) -> LintSettings:
        return LintSettings(
            targets=self.targets, guard_names=self.guard_names, guard_macros=self.guard_macros
        )

    def excludes(self) -> tuple[str, ...]:
        """Every exclude pattern in force (gitignore-style, relative to root)."""
        return self.exclude + self.extend_exclude

    def catalogue(self) -> tuple[Rule, ...]:
        return _catalogue(self.extend_rules, self.cache_path() if self.cache else None)

    def rules(self) -> tuple[Rule, ...]:
        """Selected rules that matter on at least one of the configured targets."""
        catalogue = self.catalogue()
        chosen = select_rules(
            catalogue,
            select=self.select + self.extend_select,
            ignore=self.ignore,
            where=self.source,
        )
        for _, codes in self.per_file_ignores:
            check_selectors(codes, catalogue, self.source)
        if not chosen:  # a run that cannot find anything must not pass silently
            raise ConfigError(
                f"{self.source}: no rule selected (select {list(self.select + self.extend_select)}, "
                f"ignore {list(self.ignore)})"
            )
        kept = tuple(r for r in chosen if r.applies_to(self.targets))
        if not kept:
            raise ConfigError(
                f"{self.source}: no rule selected breaks on the targets {list(self.targets)} "
                f"(selected: {', '.join(r.id for r in chosen[:8])}{', ...' if len(chosen) > 8 else ''})"
            )
        return kept

    def cache_path(self) -> Path:
        return (self.root / self.cache_dir).resolve()

    def fingerprint(self, rules: Sequence[Rule]) -> str:
        """What the cached findings of a file depend on besides its text."""
        from portagpu._version import __version__

        digest = hashlib.blake2b(digest_size=16)
        digest.update(__version__.encode())
        digest.update(repr(self.settings()).encode())
        digest.update(repr(sorted(rules, key=lambda r: r.id)).encode())
        digest.update(_code_stamp().encode())
        return digest.hexdigest()


def _catalogue(extend: tuple[str, ...], cache_dir: Path | None) -> tuple[Rule, ...]:
    """The rule catalogue, from a JSON copy when no rule file changed: parsing
    the YAML costs more than the rest of a warm run's start-up. Plain data
    only: the copy sits in the project's cache folder, which anyone who can
    write to the tree could plant (a pickle there would run their code)."""
    from portagpu.lint.catalogue import builtin_rule_files, load_catalogue

    if cache_dir is None:
        return load_catalogue(extend=extend)
    from portagpu._version import __version__

    files = [str(p) for p in builtin_rule_files()] + list(extend)
    try:
        stamp = [(f, os.stat(f).st_mtime_ns, os.stat(f).st_size) for f in files]
    except OSError:
        return load_catalogue(extend=extend)  # let the loader name the missing file
    key = hashlib.blake2b(repr((__version__, stamp)).encode(), digest_size=12).hexdigest()
    cached = cache_dir / __version__ / f"rules-{key}.json"
    rules = _read_rules_cache(cached)
    if rules is not None:
        return rules
    rules = load_catalogue(extend=extend)
    _write_rules_cache(cached, rules)
    return rules


def _rules_to_data(rules: Sequence[Rule]) -> list[dict[str, Any]]:
    import dataclasses

    return [dataclasses.asdict(r) for r in rules]


def _rules_from_data(data: Any) -> tuple[Rule, ...]:
    from portagpu.lint.model import Example

    out = []
    for item in data:
        fields = dict(item)
        for name in ("targets", "tokens", "requires", "only_files"):
            fields[name] = tuple(str(v) for v in fields.get(name, ()))
        for name in ("invalid", "valid"):
            fields[name] = tuple(Example(**example) for example in fields[name])
        if not isinstance(fields["options"], dict):
            raise TypeError("options must be a table")
        out.append(Rule(**fields))
    return tuple(out)


def _read_rules_cache(path: Path) -> tuple[Rule, ...] | None:
    import json

    try:
        with open(path, "rb") as fh:
            return _rules_from_data(json.loads(fh.read()))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # missing or damaged: the YAML is read instead (and the copy rewritten)


def _write_rules_cache(path: Path, rules: tuple[Rule, ...]) -> None:
    """Only a copy that reads back equal (JSON has no int keys, no tuples in options)."""
    import json
    import tempfile

    data = _rules_to_data(rules)
    try:
        if _rules_from_data(json.loads(json.dumps(data))) != rules:
            return
    except (TypeError, ValueError):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob("rules-*"):
            old.unlink(missing_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-rules-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, separators=(",", ":")))  # the C encoder; dump streams in Python
        os.replace(tmp, path)
    except OSError:
        pass


def _code_stamp() -> str:
    """Sizes and mtimes of the checker code, so an editable install invalidates
    the cache when a checker changes without a version bump."""
    import portagpu

    base = Path(portagpu.__file__).parent
    parts = []
    for top in ("lint", "cuda"):
        for folder, dirs, files in os.walk(base / top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if name.endswith(".py"):
                    try:
                        st = os.stat(os.path.join(folder, name))
                    except OSError:
                        continue
                    parts.append(f"{os.path.relpath(folder, base)}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(sorted(parts))


def _matches(selector: str, code: str) -> int:
    """Specificity of a selector for a code: -1 no match, 0 for ALL, else its length."""
    if selector == "ALL":
        return 0
    return len(selector) if code.startswith(selector) else -1


def check_selectors(selectors: Iterable[str], catalogue: Sequence[Rule], where: str) -> None:
    ids = [r.id for r in catalogue]
    for selector in selectors:
        if selector != "ALL" and not any(i.startswith(selector) for i in ids):
            raise ConfigError(f"{where}: unknown rule code or prefix {selector!r}")


def select_rules(
    catalogue: Sequence[Rule], *, select: Sequence[str], ignore: Sequence[str], where: str
) -> tuple[Rule, ...]:
    """ruff's semantics: the most specific selector wins; on a tie, ignore wins."""
    check_selectors(select, catalogue, where)
    check_selectors(ignore, catalogue, where)
    chosen = []
    for rule in catalogue:
        picked = max((_matches(s, rule.id) for s in select), default=-1)
        dropped = max((_matches(s, rule.id) for s in ignore), default=-1)
        if picked >= 0 and picked > dropped:
            chosen.append(rule)
    return tuple(chosen)


def parse_targets(raw: Any, where: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [t.strip() for t in raw.split(",") if t.strip()]
    if not isinstance(raw, list | tuple) or not raw:
        raise ConfigError(f"{where}: targets must be a non-empty list of {list(ALL_TARGETS)}")
    bad = [t for t in raw if t not in ALL_TARGETS]
    if bad:
        raise ConfigError(f"{where}: unknown target(s) {bad}; known: {', '.join(ALL_TARGETS)}")
    return tuple(dict.fromkeys(raw))


def _strings(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str) or not isinstance(value, list):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    if not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


KNOWN_TABLES = ("lint", "kernels")  # [tool.portagpu.<name>]
#: [tool.portagpu] settings of the compile proof (portagpu.kernelcheck), not tables
KNOWN_SETTINGS = ("compile-for", "compile-on-failure", "kernel-cache")


def _section(data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """[tool.portagpu.lint], or None; a [tool.portagpu] that is not a table,
    or holds an unknown or non-table entry (a typo such as `lnt`), is an error."""
    tool = data.get("tool")
    portagpu = tool.get("portagpu") if isinstance(tool, dict) else None
    if portagpu is None:
        return None
    if not isinstance(portagpu, dict):
        raise ConfigError(f"{path}: `[tool] portagpu` must be a table, not {type(portagpu).__name__}")
    for name, value in portagpu.items():
        if name in KNOWN_SETTINGS:
            continue
        if name not in KNOWN_TABLES:
            import difflib

            close = difflib.get_close_matches(name, KNOWN_TABLES + KNOWN_SETTINGS, n=1)
            hint = f"; did you mean [tool.portagpu.{close[0]}]?" if close else ""
            raise ConfigError(
                f"{path}: unknown table [tool.portagpu.{name}] (known: "
                f"{', '.join(f'[tool.portagpu.{t}]' for t in KNOWN_TABLES)}){hint}"
            )
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: `[tool.portagpu] {name}` must be a table, not {type(value).__name__}")
    return portagpu.get("lint")


def check_patterns(patterns: Iterable[str], where: str, key: str) -> None:
    """Each gitignore-style pattern must compile (`!` alone does not)."""
    import pathspec

    for pattern in patterns:
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception as exc:  # pathspec's errors share no base class across versions
            raise ConfigError(f"{where}: `{key}` pattern {pattern!r} is not valid: {exc}") from None


def find_pyproject(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest pyproject.toml at or above `start` holding [tool.portagpu.lint]."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            section = _section(_load_toml(candidate), candidate)
            if section is not None:
                return candidate, section
    return None


def config_from_table(table: dict[str, Any], path: Path, *, cache: bool = True) -> LintConfig:
    where = str(path)
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) in [tool.portagpu.lint]: {', '.join(unknown)}; "
            f"known: {', '.join(sorted(KNOWN_KEYS))}"
        )
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of pattern = [codes]")
    pfi = tuple(
        (pattern, _strings({"codes": codes}, "codes", f"{where}: per-file-ignores {pattern!r}"))
        for pattern, codes in per_file.items()
    )
    root = path.parent
    config = LintConfig(
        root=root,
        source=where,
        select=_strings(table, "select", where) if "select" in table else ("ALL",),
        extend_select=_strings(table, "extend-select", where),
        ignore=_strings(table, "ignore", where),
        per_file_ignores=pfi,
        exclude=_strings(table, "exclude", where),
        extend_exclude=_strings(table, "extend-exclude", where),
        targets=parse_targets(table["targets"], where) if "targets" in table else ALL_TARGETS,
        guard_names=_strings(table, "guard-names", where),
        guard_macros=_strings(table, "guard-macros", where),
        extend_rules=tuple(str((root / p).resolve()) for p in _strings(table, "extend-rules", where)),
        cache=cache,
    )
    for key in ("respect-gitignore", "force-exclude"):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{where}: `{key}` must be true or false")
            config = replace(config, **{key.replace("-", "_"): table[key]})
    if "cache-dir" in table:
        if not isinstance(table["cache-dir"], str):
            raise ConfigError(f"{where}: `cache-dir` must be a string")
        config = replace(config, cache_dir=table["cache-dir"])
    check_patterns(config.exclude, where, "exclude")
    check_patterns(config.extend_exclude, where, "extend-exclude")
    check_patterns((pattern for pattern, _ in config.per_file_ignores), where, "per-file-ignores")
    for rule_file in config.extend_rules:
        if not Path(rule_file).is_file():
            raise ConfigError(f"{where}: extend-rules file not found: {rule_file}")
    config.rules()  # unknown codes in select/ignore/per-file-ignores fail here, naming the file
    return config


def load_config(
    start: Path | None = None, *, config_file: Path | None = None, cache: bool = True
) -> LintConfig:
    """The project's config (nearest pyproject.toml with a [tool.portagpu.lint]
    section above `start`), or defaults rooted at the current directory.
    cache=False: no cache is read or written, not even while validating."""
    if config_file is not None:
        section = _section(_load_toml(config_file), config_file)
        return config_from_table(section or {}, config_file.resolve(), cache=cache)
    found = find_pyproject(start or Path.cwd())
    if found is None:
        return LintConfig(root=Path.cwd(), cache=cache)
    path, section = found
    return config_from_table(section, path, cache=cache)


def with_overrides(
    config: LintConfig,
    *,
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    targets: Sequence[str] | None = None,
    cache: bool | None = None,
    jobs: int | None = None,
    exclude: Sequence[str] | None = None,
    extend_exclude: Sequence[str] = (),
    per_file_ignores: Sequence[str] | None = None,
    extend_per_file_ignores: Sequence[str] = (),
) -> LintConfig:
    """Command-line options on top of the file, as ruff does: --select,
    --exclude and --per-file-ignores replace the file's, the rest extend.
    Patterns given here are relative to the current folder; per-file-ignores
    are `PATTERN:CODES`."""
    changes: dict[str, Any] = {}
    if select is not None:
        changes["select"] = tuple(select)
    if extend_select:
        changes["extend_select"] = config.extend_select + tuple(extend_select)
    if ignore:
        changes["ignore"] = config.ignore + tuple(ignore)
    if targets is not None:
        changes["targets"] = parse_targets(list(targets), "--target")
    if cache is not None:
        changes["cache"] = cache
    if jobs is not None:
        if jobs < 1:
            raise ConfigError("-j/--jobs must be at least 1")
        changes["jobs"] = jobs
    if exclude is not None:
        check_patterns(exclude, "--exclude", "exclude")
        changes["exclude"] = tuple(_from_cwd(p, config.root) for p in exclude)
    if extend_exclude:
        check_patterns(extend_exclude, "--extend-exclude", "extend-exclude")
        changes["extend_exclude"] = config.extend_exclude + tuple(_from_cwd(p, config.root) for p in extend_exclude)
    if per_file_ignores is not None:
        changes["per_file_ignores"] = _cli_per_file(per_file_ignores, "--per-file-ignores", config.root)
    if extend_per_file_ignores:
        base = changes.get("per_file_ignores", config.per_file_ignores)
        extra = _cli_per_file(extend_per_file_ignores, "--extend-per-file-ignores", config.root)
        changes["per_file_ignores"] = base + extra
    updated = replace(config, source=f"{config.source} (with command-line options)", **changes)
    if select is not None or extend_select or ignore or "per_file_ignores" in changes:
        updated.rules()
    return updated


def _cli_per_file(items: Sequence[str], flag: str, root: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for item in items:
        pattern, sep, codes = item.rpartition(":")
        selectors = tuple(c.strip().upper() for c in codes.split(",") if c.strip())
        if not sep or not pattern or not selectors:
            raise ConfigError(f"{flag} {item!r}: expected PATTERN:CODES, e.g. 'tests/*:PG1,PG402'")
        check_patterns([pattern], flag, "per-file-ignores")
        out.append((_from_cwd(pattern, root), selectors))
    return tuple(out)


def _from_cwd(pattern: str, root: Path) -> str:
    """A gitignore pattern typed relative to the current folder, made relative
    to `root` (where the file's patterns are anchored). Only a pattern with a
    slash before its end is anchored; the others match at any depth anyway."""
    negate = pattern.startswith("!")
    body = pattern[1:] if negate else pattern
    if "/" not in body.rstrip("/"):
        return pattern
    try:
        prefix = Path.cwd().resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return pattern  # the current folder is outside the project: as typed
    if prefix in ("", "."):
        return pattern
    return ("!" if negate else "") + "/" + prefix + "/" + body.lstrip("/")
