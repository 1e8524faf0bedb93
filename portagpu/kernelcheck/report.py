"""The result of a compile check, and its table, JSON and SARIF forms."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from portagpu._version import __version__
from portagpu.kernelcheck.targets import KIB, Target
from portagpu.kernelcheck.toolchain import Toolchain
from portagpu.kernelcheck.verdict import COMPILE_ERROR, DOES_NOT_FIT, FITS, NOT_CHECKED, Check
from portagpu.lint.report import _uri, sarif_log

FORMATS = ("table", "json", "sarif")
MAX_NOTES = 10


@dataclass
class Report:
    checks: list[Check]
    targets: list[Target]
    toolchain: Toolchain | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)  # what a pytest session spent on it

    def __post_init__(self) -> None:
        self.checks = self.checks + _autotune_group_failures(self.checks)

    def merge(self, other: Report) -> Report:
        targets = {t.name: t for t in [*self.targets, *other.targets]}
        return Report(
            checks=[c for c in self.checks if c.config != "all"]
            + [c for c in other.checks if c.config != "all"],
            targets=list(targets.values()),
            toolchain=self.toolchain or other.toolchain,
            notes=self.notes + [n for n in other.notes if n not in self.notes],
            seconds=self.seconds + other.seconds,
        )

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.blocking]

    @property
    def dropped(self) -> list[Check]:
        return [c for c in self.checks if c.dropped]

    @property
    def not_checked(self) -> list[Check]:
        return [c for c in self.checks if c.status == NOT_CHECKED]

    def skipped_targets(self) -> dict[str, str]:
        """Targets for which nothing was checked, and the (first) reason."""
        by_target: dict[str, list[Check]] = defaultdict(list)
        for check in self.checks:
            by_target[check.target].append(check)
        return {
            name: checks[0].detail
            for name, checks in by_target.items()
            if checks and all(c.status == NOT_CHECKED for c in checks)
        }

    def summary(self) -> dict[str, Any]:
        real = [c for c in self.checks if c.config != "all"]
        counts = Counter(c.status for c in real)
        return {
            "checks": sum(counts.values()),
            "fits": counts[FITS],
            "does_not_fit": counts[DOES_NOT_FIT],
            "compile_error": counts[COMPILE_ERROR],
            "not_checked": counts[NOT_CHECKED],
            "failures": len(self.failures),
            "autotune_configs_dropped": len(self.dropped),
            "compiled": sum(1 for c in real if not c.cached and c.status != NOT_CHECKED),
            "cache_hits": sum(1 for c in real if c.cached),
            "seconds": round(self.seconds, 3),
        }

    def summary_line(self) -> str:
        s = self.summary()
        line = (
            f"{s['checks']} check(s): {s['fits']} fit, {s['does_not_fit']} do not fit, "
            f"{s['compile_error']} do not compile, {s['not_checked']} not checked; "
            f"{s['failures']} failure(s)"
        )
        if s["autotune_configs_dropped"]:
            line += f", {s['autotune_configs_dropped']} autotune config(s) dropped"
        return (
            line
            + f" ({s['compiled']} compiled, {s['cache_hits']} from the cache, {s['seconds']:.1f} s)"
        )


def _autotune_group_failures(checks: list[Check]) -> list[Check]:
    """An autotuned launch none of whose configs runs on a target fails there: the
    autotuner runs its "best" config anyway, and that launch raises."""
    groups: dict[tuple[str, str], list[Check]] = defaultdict(list)
    for check in checks:
        if check.mode == "autotune" and check.config != "all":
            groups[(check.group, check.target)].append(check)
    extra = []
    for (_, target), members in groups.items():
        if members and all(c.dropped for c in members):
            first = members[0]
            extra.append(
                replace(
                    first,
                    config="all",
                    status=DOES_NOT_FIT,
                    spec=f"all {len(members)} configs",
                    outcome="launch raises: every autotune config is dropped on this target",
                    reasons=[f"none of the {len(members)} autotune configs runs on {target}"],
                    detail="",
                    threads=None,
                    shared=None,
                    registers={},
                    spills=None,
                    occupancy=None,
                    occupancy_unit="",
                )
            )
    return extra


# --- table -------------------------------------------------------------------------------
def _size(n: int | None) -> str:
    if n is None:
        return "-"
    return (
        f"{n / KIB:.0f} KiB"
        if n >= KIB and n % KIB == 0
        else f"{n} B"
        if n < KIB
        else f"{n / KIB:.1f} KiB"
    )


def _registers(check: Check) -> str:
    regs = check.registers
    if not regs:
        text = "-"
    elif "regs" in regs:
        text = str(regs["regs"])
    else:
        text = " ".join(f"{k[0]}{regs[k]}" for k in ("vgpr", "agpr", "sgpr") if k in regs)
    if check.spills:
        text += f" (spills {check.spills})"
    return text


def _verdict(check: Check) -> str:
    if check.status == FITS:
        return "fits" + (f" ({check.detail})" if check.detail else "")
    if check.status == NOT_CHECKED:
        return f"not checked: {check.detail}"
    why = "; ".join(check.reasons)
    if check.status == COMPILE_ERROR and check.detail and check.detail not in why:
        why = f"{why}: {check.detail}" if why else check.detail
    if check.dropped:
        return f"dropped by autotune: {why}"
    return f"FAILS ({check.outcome}): {why}"


def format_table(report: Report, *, only_problems: bool = False, width: int | None = None) -> str:
    header = (
        "kernel",
        "specialisation",
        "target",
        "threads",
        "LDS/shared",
        "registers",
        "occupancy",
        "verdict",
    )
    rows = []
    for check in report.checks:
        if only_problems and check.status == FITS:
            continue
        kernel = check.name + (f" [autotune {check.config}]" if check.mode == "autotune" else "")
        occupancy = (
            f"{check.occupancy} {check.occupancy_unit.split(' ')[0]}"
            if check.occupancy is not None
            else "-"
        )
        rows.append(
            (
                kernel,
                check.spec,
                check.target,
                f"{check.threads}/{check.max_threads}" if check.threads is not None else "-",
                f"{_size(check.shared)}/{_size(check.max_shared)}"
                if check.shared is not None
                else "-",
                _registers(check),
                occupancy,
                _verdict(check),
            )
        )
    lines = []
    if rows:
        widths = [
            min(max(len(str(r[i])) for r in [header, *rows]), 72 if i == 1 else 40)
            for i in range(len(header) - 1)
        ]
        for row in [header, *rows]:
            cells = [_clip(str(v), w).ljust(w) for v, w in zip(row[:-1], widths, strict=True)]
            lines.append("  ".join(cells) + "  " + str(row[-1]))
        lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 7)
    for target, why in report.skipped_targets().items():
        lines.append(f"not checked for {target}: {why}")
    shown = report.notes[:MAX_NOTES]
    lines += shown
    if len(report.notes) > len(shown):
        lines.append(
            f"... and {len(report.notes) - len(shown)} more note(s) (--format json lists all)"
        )
    lines.append(f"portagpu kernelcheck: {report.summary_line()}")
    return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"


# --- JSON --------------------------------------------------------------------------------
def report_json(report: Report) -> dict[str, Any]:
    tools = report.toolchain
    return {
        "tool": "portagpu kernelcheck",
        "portagpu": __version__,
        "triton": tools.triton if tools else None,
        "targets": [
            {
                "name": t.name,
                "vendor": t.vendor,
                "warp_size": t.warp_size,
                "max_threads": t.max_threads,
                "max_shared": t.max_shared,
                "description": t.description,
                "inferred": t.inferred,
            }
            for t in report.targets
        ],
        "skipped_targets": report.skipped_targets(),
        "notes": report.notes,
        "summary": report.summary(),
        "session_seconds": report.timings,
        "checks": [c.to_json() for c in report.checks],
    }


def format_json(report: Report) -> str:
    return json.dumps(report_json(report), indent=2)


# --- SARIF -------------------------------------------------------------------------------
RULES = {
    "PGK001": ("block-too-large", "More threads per block than the target allows (1,024)"),
    "PGK002": ("shared-memory", "More shared memory / LDS per block than the target has"),
    "PGK003": ("registers", "More registers per block than an SM has"),
    "PGK004": ("compile-error", "Does not compile for the target"),
    "PGK005": ("autotune-config-dropped", "An autotune config Triton silently skips on the target"),
    "PGK006": ("no-autotune-config-runs", "No autotune config of the kernel runs on the target"),
    "PGK007": ("not-checked", "The check could not run for the target"),
    "PGK008": ("register-spills", "Registers spill to scratch memory on the target"),
}


def _rule(check: Check) -> str | None:
    if check.config == "all":
        return "PGK006"
    if check.dropped:
        return "PGK005"
    if check.status == COMPILE_ERROR:
        return "PGK004"
    if check.status == DOES_NOT_FIT:
        reasons = " ".join(check.reasons)
        return (
            "PGK001"
            if "threads per block" in reasons
            else "PGK002"
            if "per block" in reasons
            else "PGK003"
        )
    if check.status == NOT_CHECKED:
        return "PGK007"
    if check.spills:
        return "PGK008"
    return None


def _location(path: str, line: int) -> dict[str, Any]:
    try:  # relative to the working directory where it is under it, as lint reports
        rel = os.path.relpath(path)
        path = path if rel.startswith("..") else rel
    except ValueError:  # another drive on Windows
        pass
    return {
        "physicalLocation": {"artifactLocation": _uri(path), "region": {"startLine": max(1, line)}}
    }


_LEVEL = {"PGK005": "warning", "PGK007": "note", "PGK008": "note"}


def format_sarif(report: Report) -> str:
    ids = list(RULES)
    results = []
    for check in report.checks:
        rule = _rule(check)
        if rule is None:
            continue
        level = "error" if check.blocking else _LEVEL.get(rule, "warning")
        text = f"{check.name} [{check.spec}] on {check.target}: {_verdict(check)}"
        results.append(
            {
                "ruleId": rule,
                "ruleIndex": ids.index(rule),
                "level": level,
                "message": {"text": text},
                "locations": [_location(check.file, check.line)],
                "properties": {
                    "target": check.target,
                    "mode": check.mode,
                    "config": check.config,
                    "origin": check.origin,
                },
            }
        )
    tools = report.toolchain
    rules = [
        {
            "id": rid,
            "name": name,
            "shortDescription": {"text": text},
            "defaultConfiguration": {"level": _LEVEL.get(rid, "error")},
        }
        for rid, (name, text) in RULES.items()
    ]
    properties = {
        "targets": [t.name for t in report.targets],
        "triton": tools.triton if tools else None,
        "summary": report.summary(),
    }
    return sarif_log("portagpu-kernelcheck", rules, results, properties=properties)


def render(report: Report, fmt: str, **kwargs: Any) -> str:
    if fmt == "json":
        return format_json(report)
    if fmt == "sarif":
        return format_sarif(report)
    return format_table(report, **kwargs)
