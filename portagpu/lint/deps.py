"""Dependency lists (requirements*.txt, constraints*.txt, pyproject.toml):
pins that lock a project to NVIDIA (`cupy-cuda12x`, `nvidia-*-cu12`, `+cu121`
wheels, CUDA index URLs, `jax[cuda12]`...) and the deprecated `pynvml`
package. Line based: a requirement and an index URL each sit on one line in
both formats. `setup.py` is Python and goes through the Python checkers
(checkers/deps.py), which share the pattern matching below.

A file that already has a ROCm story is a vendor switch, not a lock: it
mentions ROCm/HIP itself (an extra, an index), a sibling file is named for
AMD (`requirements_amd.txt`, `requirements/rocm.txt`), or the file is itself
named for CUDA (`requirements-cu121.txt`, `requirements/cuda.txt`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from portagpu.lines import split_lines
from portagpu.lint.model import Finding, Fix, LintSettings, Rule

_COMMENT = re.compile(r"(?:^|\s)#.*$")
_ROCM_WORD = re.compile(r"rocm|(?:^|[^a-z])hip(?:$|[^a-z])|amdgpu|migraphx", re.IGNORECASE)
_CUDA_NAMED = re.compile(r"(?:^|[^a-z])(?:cuda|cu\d{2,3}|nvidia)(?:$|[^a-z])")
_AMD_NAMED = re.compile(r"(?:^|[^a-z])(?:rocm|hip|amd)(?:$|[^a-z])")


@dataclass(frozen=True)
class Pin:
    pattern: re.Pattern[str]
    what: str
    rocm: str


@lru_cache(maxsize=8)
def _compile(raw: tuple[tuple[str, str, str], ...]) -> tuple[Pin, ...]:
    return tuple(Pin(re.compile(p, re.IGNORECASE), what, rocm) for p, what, rocm in raw)


def pins_of(rule: Rule) -> tuple[Pin, ...]:
    raw = rule.options.get("pins", ())
    return _compile(tuple((p["pattern"], p["what"], p["rocm"]) for p in raw))


def match_pin(text: str, pins: Iterable[Pin]) -> tuple[Pin, re.Match[str]] | None:
    for pin in pins:
        found = pin.pattern.search(text)
        if found:
            return pin, found
    return None


def has_rocm_story(text: str) -> bool:
    """The text names ROCm/HIP outside comments: an AMD extra, index or package."""
    return any(_ROCM_WORD.search(_COMMENT.sub("", line)) for line in split_lines(text))


def vendor_file(path: str) -> bool:
    """Named for CUDA itself, or next to a file named for AMD: per-vendor lists."""
    folder, base = os.path.split(path)
    if _CUDA_NAMED.search(os.path.splitext(base)[0].lower()):
        return True
    try:
        siblings = os.listdir(folder or ".")
    except OSError:
        return False
    return any(
        name != base
        and _AMD_NAMED.search(os.path.splitext(name)[0].lower())
        and name.endswith(base[-4:])
        for name in siblings
    )


def _lines(text: str) -> Iterable[tuple[int, str]]:
    for number, line in enumerate(split_lines(text), 1):
        body = _COMMENT.sub("", line)
        if body.strip():
            yield number, body


def _finding(
    path: str, rule: Rule, number: int, line: str, start: int, end: int, **fields
) -> Finding:
    message = rule.message.format(**fields)
    fix = Fix("suggestion", rule.replacement)
    return Finding(path, number, start + 1, number, end + 1, rule.id, message, rule.severity, fix)


# the string being read is the value of an `extra =` / `group =` key, or the
# project's own `name =` (pyproject.toml's [project] name is no dependency)
_NAMES_NO_PACKAGE = re.compile(r"""(?:\b(?:extra|group)|^\s*name)\s*=\s*["']?[^"'=]*$""")


def pinned_dependency(path: str, text: str, rule: Rule) -> list[Finding]:
    if has_rocm_story(text) or vendor_file(path):
        return []
    pins = pins_of(rule)
    out = []
    for number, body in _lines(text):
        hit = match_pin(body, pins)
        if hit and _NAMES_NO_PACKAGE.search(body, 0, hit[1].start()):
            continue  # `{ extra = "torch-cu12" }` (uv's conflicts), `name = "nvidia-x"`: names, no package
        if hit:
            pin, found = hit
            out.append(
                _finding(
                    path,
                    rule,
                    number,
                    body,
                    found.start(),
                    found.end(),
                    what=pin.what,
                    rocm=pin.rocm,
                )
            )
    return out


_PYNVML = re.compile(r"""(?:^|["'\s,\[])(pynvml)\s*(?=$|[<>=!~;\[ "',])""")


def deprecated_pynvml(path: str, text: str, rule: Rule) -> list[Finding]:
    out = []
    for number, body in _lines(text):
        found = _PYNVML.search(body)
        if found:
            start, end = found.span(1)
            out.append(_finding(path, rule, number, body, start, end, module="pynvml"))
    return out


TextChecker = Callable[[str, str, Rule], list[Finding]]
CHECKERS: dict[str, TextChecker] = {
    "nvidia_pinned_dependency": pinned_dependency,
    "deprecated_pynvml": deprecated_pynvml,
}


def check_deps(
    path: str, text: str, rules: Sequence[Rule], settings: LintSettings
) -> list[Finding]:
    """Findings of the rules that have a dependency-file implementation."""
    findings: list[Finding] = []
    for rule in rules:
        check = CHECKERS.get(rule.checker)
        if check is not None:
            findings.extend(check(path, text, rule))
    findings.sort(key=Finding.sort_key)
    return findings
