"""Loads and validates the YAML rule catalogue (rules/*.yaml and user files).

A catalogue file holds one family of rules:

    family: torch-device          # optional; defaults to the file stem
    language: python              # python | cuda (default for its rules)
    rules:
      - id: PG101
        name: torch-cuda-api
        severity: warning         # error | warning | info
        targets: [mps, cpu]       # where the idiom breaks
        message: "`{call}` is CUDA-only; use `{replacement}`"
        why: ...                  # what breaks, on which vendor
        replacement: ...          # the portable way
        fix: suggestion           # safe | suggestion | none
        checker: torch_cuda_call  # Python checker implementing it
        tokens: ["cuda"]          # pre-scan: a file lacking all of these is skipped
        requires: [nccl]          # optional: the rule fires only where one of these is too
        token_match: word         # optional: tokens count as whole words outside comments and docstrings
        only_files: [setup.py]    # optional: the only Python sources it reads, by name
        options: {...}            # data the checker reads
        examples:
          invalid: ["torch.cuda.synchronize()"]
          valid: ["torch.accelerator.synchronize()",
                  {code: "torch>=2.4", path: requirements.txt}]   # linted as that file
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from portagpu.errors import ConfigError
from portagpu.lint.model import ALL_TARGETS, Example, Rule

RULE_ID = re.compile(r"^[A-Z]{1,4}\d{3,4}$")
SEVERITIES = ("error", "warning", "info")
FIXES = ("safe", "suggestion", "none")
LANGUAGES = ("python", "cuda")
TOKEN_MATCHES = ("substring", "word")
REQUIRED = ("id", "name", "message", "why", "replacement", "checker")


def _examples(raw: Any, where: str) -> tuple[Example, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: examples must be a list")
    out = []
    for item in raw:
        if isinstance(item, str):
            out.append(Example(item))
        elif isinstance(item, dict) and isinstance(item.get("code"), str):
            out.append(Example(item["code"], str(item.get("note", "")), str(item.get("path", ""))))
        else:
            raise ConfigError(f"{where}: an example must be a string or {{code, note, path}}")
    return tuple(out)


def parse_rule(raw: dict[str, Any], *, family: str, language: str, source: str) -> Rule:
    where = f"{source}: rule {raw.get('id', '?')}"
    missing = [k for k in REQUIRED if not raw.get(k)]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}")
    if not RULE_ID.match(str(raw["id"])):
        raise ConfigError(f"{where}: id must look like PG101")
    severity = raw.get("severity", "warning")
    if severity not in SEVERITIES:
        raise ConfigError(f"{where}: severity must be one of {SEVERITIES}")
    fix = raw.get("fix", "none")
    if fix not in FIXES:
        raise ConfigError(f"{where}: fix must be one of {FIXES}")
    lang = raw.get("language", language)
    if lang not in LANGUAGES:
        raise ConfigError(f"{where}: language must be one of {LANGUAGES}")
    targets = tuple(raw.get("targets", ALL_TARGETS))
    bad = [t for t in targets if t not in ALL_TARGETS]
    if bad:
        raise ConfigError(f"{where}: unknown targets {bad}; known: {list(ALL_TARGETS)}")
    token_match = raw.get("token_match", "substring")
    if token_match not in TOKEN_MATCHES:
        raise ConfigError(f"{where}: token_match must be one of {TOKEN_MATCHES}")
    if token_match == "word" and lang != "python":
        raise ConfigError(f"{where}: token_match: word is for Python rules (`#` starts no comment in CUDA)")
    examples = raw.get("examples") or {}
    return Rule(
        id=str(raw["id"]),
        name=str(raw["name"]),
        family=family,
        language=lang,
        severity=severity,
        targets=targets,
        message=str(raw["message"]).strip(),
        why=str(raw["why"]).strip(),
        replacement=str(raw["replacement"]).strip(),
        fix=fix,
        checker=str(raw["checker"]),
        options=dict(raw.get("options") or {}),
        invalid=_examples(examples.get("invalid"), where),
        valid=_examples(examples.get("valid"), where),
        source=source,
        tokens=tuple(str(t) for t in raw.get("tokens") or ()),
        requires=tuple(str(t) for t in raw.get("requires") or ()),
        token_match=token_match,
        only_files=tuple(str(t) for t in raw.get("only_files") or ()),
    )


def load_file(path: Path | str, text: str | None = None) -> list[Rule]:
    import yaml  # local: keeps `import portagpu` light

    path = Path(path)
    try:
        # libyaml's loader when present: ~10x faster, and it runs on every lint
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(text if text is not None else path.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read rule file: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}{line}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise ConfigError(f"{path}: a rule file needs a top-level `rules:` list")
    family = str(data.get("family", path.stem))
    language = str(data.get("language", "python"))
    rules = []
    for raw in data["rules"]:
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: every entry of `rules:` must be a mapping")
        rules.append(parse_rule(raw, family=family, language=language, source=str(path)))
    return rules


def builtin_rule_files() -> list[Path]:
    root = resources.files("portagpu.rules")
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".yaml"))


@lru_cache(maxsize=8)
def _load(paths: tuple[str, ...]) -> tuple[Rule, ...]:
    rules: dict[str, Rule] = {}
    for path in paths:
        for rule in load_file(path):
            if rule.id in rules:
                raise ConfigError(
                    f"{path}: rule {rule.id} is already defined in {rules[rule.id].source}"
                )
            rules[rule.id] = rule
    return tuple(sorted(rules.values(), key=lambda r: r.id))


def load_catalogue(extend: Iterable[Path | str] = ()) -> tuple[Rule, ...]:
    """Every built-in rule plus those in `extend` (config `extend-rules`), sorted by id."""
    paths = [str(p) for p in builtin_rule_files()] + [str(Path(p)) for p in extend]
    return _load(tuple(paths))


def rules_by_id(rules: Iterable[Rule]) -> dict[str, Rule]:
    return {r.id: r for r in rules}
