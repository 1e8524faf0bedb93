"""Output formats of `portagpu lint`: text (like ruff), grouped, json, sarif
(2.1.0), github (workflow commands), and the --statistics inventory."""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from portagpu._version import __version__
from portagpu.lint.model import ALL_TARGETS, Finding, Fix, Rule

FORMATS = ("text", "grouped", "json", "sarif", "github")
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFO_URI = "https://github.com/portagpu/portagpu"


class Style:
    """ANSI colour, only when asked for (a TTY, or FORCE_COLOR)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("1;31", text)

    def cyan(self, text: str) -> str:
        return self._wrap("36", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)


def _fixable(finding: Finding) -> bool:
    return finding.fix is not None and finding.fix.applicability == "safe" and bool(finding.fix.edits)


def _where(f: Finding, sep: str = ":") -> str:
    """line:col, or `cell N:line:col` in a notebook (as ruff prints it)."""
    if f.cell is not None:
        return f"cell {f.cell[0]}{sep}{f.cell[1]}{sep}{f.cell[2]}"
    return f"{f.line}{sep}{f.col}"


def format_text(findings: Sequence[Finding], style: Style, *, show_fixes: bool = False) -> str:
    lines = []
    for f in findings:
        mark = f" {style.cyan('[*]')}" if _fixable(f) else ""
        lines.append(
            f"{style.bold(f.path)}{style.cyan(':')}{_where(f, style.cyan(':'))}{style.cyan(':')} "
            f"{style.red(f.code)}{mark} {f.message}"
        )
        if show_fixes and f.fix is not None:
            kind = "fix" if _fixable(f) else "suggestion"
            lines.append(f"    {style.dim(kind + ':')} {f.fix.message}")
    return "\n".join(lines)


def format_grouped(findings: Sequence[Finding], style: Style, *, show_fixes: bool = False) -> str:
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_path[f.path].append(f)
    blocks = []
    for path, group in by_path.items():
        width = max(len(_where(f)) for f in group)
        rows = [style.bold(style._wrap("4", path)) + ":"]
        for f in group:
            mark = f" {style.cyan('[*]')}" if _fixable(f) else ""
            rows.append(f"  {_where(f).ljust(width)} {style.red(f.code)}{mark} {f.message}")
            if show_fixes and f.fix is not None:
                rows.append(f"  {' ' * width}   {style.dim('fix:')} {f.fix.message}")
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks)


def _fix_json(fix: Fix | None) -> dict | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [
            {
                "content": e.content,
                "location": {"line": e.line, "column": e.col},
                "end_location": {"line": e.end_line, "column": e.end_col},
            }
            for e in fix.edits
        ],
    }


def finding_json(f: Finding, rules: dict[str, Rule]) -> dict:
    rule = rules.get(f.code)
    return {
        "path": f.path,
        "line": f.line,
        "column": f.col,
        "end_line": f.end_line,
        "end_column": f.end_col,
        "code": f.code,
        "name": rule.name if rule else None,
        "message": f.message,
        "severity": f.severity,
        "targets": list(rule.targets) if rule else [],
        "fix": _fix_json(f.fix),
        **({"cell": {"number": f.cell[0], "line": f.cell[1], "column": f.cell[2]}} if f.cell is not None else {}),
    }


def format_json(findings: Sequence[Finding], rules: Sequence[Rule]) -> str:
    by_id = {r.id: r for r in rules}
    return json.dumps([finding_json(f, by_id) for f in findings], indent=2)


def _github_escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def format_github(findings: Sequence[Finding]) -> str:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    return "\n".join(
        f"::{level.get(f.severity, 'warning')} file={_github_escape(f.path, prop=True)},"
        f"line={f.line},col={f.col},endLine={f.end_line},endColumn={f.end_col},"
        f"title={_github_escape(f'portagpu ({f.code})', prop=True)}::"
        f"{_github_escape(f'{f.path}:{f.line}:{f.col}: {f.code} {f.message}')}"
        for f in findings
    )


SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _uri(path: str) -> dict:
    """RFC 3986: a space, `%`, `#`, `?` or a non-ASCII letter in a path is
    percent-encoded (unencoded, viewers cut the path or read a fragment)."""
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(Path(path).as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


_PLACEHOLDER = re.compile(r"\{\w+\}")
_SENTENCE_END = re.compile(r"(?<![Ee]\.g\.)(?<![Ii]\.e\.)(?<=[.;])\s+(?=[A-Z`\"])")


def short_description(rule: Rule) -> str:
    """One line for a rule as a whole: its message when that needs no
    finding's details, else the first sentence of why it breaks."""
    if not _PLACEHOLDER.search(rule.message):
        return rule.message
    first = _SENTENCE_END.split(" ".join(rule.why.split()), maxsplit=1)[0].rstrip(".;:")
    return first if len(first) <= 200 else first[:197].rstrip() + "..."


def _region(line: int, col: int, end_line: int, end_col: int) -> dict:
    region = {"startLine": line, "startColumn": col, "endLine": max(end_line, line)}
    region["endColumn"] = max(end_col, col if end_line <= line else 1)
    return region


def format_sarif(findings: Sequence[Finding], rules: Sequence[Rule], errors: Sequence[str] = ()) -> str:
    used = sorted({f.code for f in findings} | {r.id for r in rules})
    by_id = {r.id: r for r in rules}
    index = {code: i for i, code in enumerate(c for c in used if c in by_id)}
    driver_rules = [
        {
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": short_description(r)},
            "fullDescription": {"text": r.why},
            "help": {"text": f"{r.why}\n\nPortable replacement: {r.replacement}"},
            "defaultConfiguration": {"level": SARIF_LEVEL[r.severity]},
            "properties": {"targets": list(r.targets), "family": r.family, "fix": r.fix},
        }
        for r in (by_id[c] for c in used if c in by_id)
    ]
    results = []
    for f in findings:
        result: dict = {
            "ruleId": f.code,
            "level": SARIF_LEVEL.get(f.severity, "warning"),
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _uri(f.path),
                        "region": _region(f.line, f.col, f.end_line, f.end_col),
                    }
                }
            ],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        if f.fix is not None and f.fix.edits:
            result["fixes"] = [
                {
                    "description": {"text": f.fix.message},
                    "artifactChanges": [
                        {
                            "artifactLocation": _uri(f.path),
                            "replacements": [
                                {
                                    "deletedRegion": _region(e.line, e.col, e.end_line, e.end_col),
                                    "insertedContent": {"text": e.content},
                                }
                                for e in f.fix.edits
                            ],
                        }
                    ],
                    "properties": {"applicability": f.fix.applicability},
                }
            ]
        results.append(result)
    invocation = {
        "executionSuccessful": not errors,
        "toolExecutionNotifications": [{"level": "error", "message": {"text": e}} for e in errors],
    }
    return sarif_log("portagpu", driver_rules, results, invocations=[invocation])


def sarif_log(tool: str, rules: list[dict], results: list[dict], **run: object) -> str:
    """One SARIF 2.1.0 run of a portagpu tool (lint, kernelcheck); `run` adds fields."""
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": tool,
                        "version": __version__,
                        "informationUri": INFO_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                **run,
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)


_API = re.compile(r"`([^`]+)`")


def _api(message: str) -> str | None:
    """The API a message names first (`torch.cuda.synchronize()`), if any."""
    m = _API.search(message)
    return m.group(1) if m else None


def statistics(findings: Sequence[Finding], rules: Sequence[Rule], targets: Sequence[str]) -> list[dict]:
    """The inventory: each code found, how often, in which files, whether it
    breaks each target, and the APIs behind it with their counts."""
    by_id = {r.id: r for r in rules}
    counts = Counter(f.code for f in findings)
    apis: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        api = _api(f.message)
        if api:
            apis[f.code][api] += 1
    fixable = Counter(f.code for f in findings if _fixable(f))
    rows = []
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = by_id.get(code)
        rows.append(
            {
                "code": code,
                "name": rule.name if rule else "",
                "count": count,
                "fixable": fixable[code],
                "status": {
                    t: ("breaks" if rule and t in rule.targets else "ok")
                    for t in (targets or ALL_TARGETS)
                },
                "files": len({f.path for f in findings if f.code == code}),
                "apis": dict(apis[code].most_common()),
            }
        )
    return rows


def format_statistics(rows: list[dict], targets: Sequence[str], style: Style) -> str:
    if not rows:
        return ""
    name_width = max(len(r["name"]) for r in rows)
    header = f"{'count':>6}  {'code':<6} {'name':<{name_width}}  {'files':>5}  " + "  ".join(
        f"{t:<6}" for t in targets
    ) + "  fixable  most used"
    out = [style.bold(header)]
    for r in rows:
        status = "  ".join(
            (style.red(f"{r['status'][t]:<6}") if r["status"][t] == "breaks" else style.green(f"{r['status'][t]:<6}"))
            for t in targets
        )
        fix = f"[*] {r['fixable']}" if r["fixable"] else ""
        code = style.red(f"{r['code']:<6}")
        used = ", ".join(f"{api} ({n})" for api, n in list(r["apis"].items())[:3])
        if len(used) > 70:
            used = used[:67] + "..."
        out.append(f"{r['count']:>6}  {code} {r['name']:<{name_width}}  {r['files']:>5}  {status}  {fix:<7}  {used}".rstrip())
    return "\n".join(out)
