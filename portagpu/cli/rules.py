"""`portagpu rules` lists the catalogue; `portagpu rule PG101` prints one rule's page."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("rules", help="list the lint rules")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--target", help="only rules that matter on these targets (comma list)")
    p.set_defaults(func=list_rules)
    q = subparsers.add_parser("rule", help="explain one lint rule, e.g. `portagpu rule PG101`")
    q.add_argument("code", help="rule id such as PG101, or its name")
    q.add_argument("--format", choices=("text", "json"), default="text")
    q.set_defaults(func=show_rule)


def _catalogue():
    from dataclasses import replace

    from portagpu.lint.config import load_config

    # the project's extend-rules too; no cache folder for a read-only command
    return replace(load_config(), cache=False).catalogue()


def _as_dict(rule) -> dict:
    return {
        "id": rule.id,
        "name": rule.name,
        "family": rule.family,
        "language": rule.language,
        "severity": rule.severity,
        "targets": list(rule.targets),
        "message": rule.message,
        "why": rule.why,
        "replacement": rule.replacement,
        "fix": rule.fix,
        "examples": {"invalid": [e.code for e in rule.invalid], "valid": [e.code for e in rule.valid]},
        "source": rule.source,
        "only_files": list(rule.only_files),
    }


def list_rules(args: argparse.Namespace) -> int:
    from portagpu.lint.config import parse_targets

    rules = _catalogue()
    if args.target:
        targets = parse_targets(args.target, "--target")
        rules = tuple(r for r in rules if r.applies_to(targets))
    if args.format == "json":
        print(json.dumps([_as_dict(r) for r in rules], indent=2))
        return 0
    width = max((len(r.name) for r in rules), default=4)
    print(f"{'code':<6} {'name':<{width}}  {'severity':<8} {'breaks on':<13} fix")
    for r in rules:
        print(f"{r.id:<6} {r.name:<{width}}  {r.severity:<8} {','.join(r.targets):<13} {r.fix}")
    return 0


def _block(code: str) -> str:
    return textwrap.indent(code.rstrip("\n"), "    ")


def show_rule(args: argparse.Namespace) -> int:
    from portagpu.errors import ConfigError

    wanted = args.code.strip()
    rules = _catalogue()
    rule = next((r for r in rules if r.id == wanted.upper() or r.name == wanted), None)
    if rule is None:
        raise ConfigError(f"unknown rule {wanted!r}; `portagpu rules` lists them")
    if args.format == "json":
        print(json.dumps(_as_dict(rule), indent=2))
        return 0
    wrap = lambda text: textwrap.fill(" ".join(text.split()), width=88)  # noqa: E731
    out = [
        f"# {rule.id} {rule.name}",
        "",
        f"Severity: {rule.severity}. Breaks on: {', '.join(rule.targets)}. "
        f"Language: {rule.language}. Fix: {rule.fix}. Family: {rule.family}."
        + (f" Reads only these Python sources: {', '.join(rule.only_files)}." if rule.only_files else ""),
        "",
        "## Why",
        wrap(rule.why),
        "",
        "## Portable replacement",
        wrap(rule.replacement),
    ]
    if rule.invalid:
        out += ["", "## Flagged"] + [_block(e.code) + "\n" for e in rule.invalid]
    if rule.valid:
        out += ["", "## Not flagged"] + [_block(e.code) + "\n" for e in rule.valid]
    out += ["", f"Suppress with `# noqa: {rule.id}` (or `// noqa: {rule.id}` in CUDA)."]
    sys.stdout.write("\n".join(out).rstrip() + "\n")
    return 0
