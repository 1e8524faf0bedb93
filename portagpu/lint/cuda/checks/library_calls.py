"""PG611: library uses hipify cannot rename 1:1 (cuBLASLt epilogues beyond
BIAS/GELU/RELU, cuDNN's graph API), reported at each use, once per line.

Data-driven from the rule's `options.apis`: a list of
{library, note, names (exact identifiers), namespaces, prefixes}.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.lint.cuda.registry import checker
from portagpu.lint.model import Rule

_NAME_NODES = ("identifier", "type_identifier", "namespace_identifier", "field_identifier")


def _matches(name: str, api: dict[str, Any]) -> bool:
    return (
        name in api.get("names", ())
        or name in api.get("namespaces", ())
        or name.startswith(tuple(api.get("prefixes", ())))
    )


def _index(rule: Rule) -> tuple[dict[str, dict[str, Any]], tuple[str, ...], list[dict[str, Any]]]:
    """(exact name -> api, every prefix, the apis): most identifiers are no
    library's, and one dict lookup and one startswith say so."""
    apis = [api for api in rule.options.get("apis", ()) if isinstance(api, dict)]
    exact: dict[str, dict[str, Any]] = {}
    for api in reversed(apis):  # the first api listed wins, as before
        for name in (*api.get("names", ()), *api.get("namespaces", ())):
            exact[name] = api
    prefixes = tuple(p for api in apis for p in api.get("prefixes", ()))
    return exact, prefixes, apis


@checker("library_calls")
def library_calls(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    exact, prefixes, apis = _index(rule)
    lines: set[tuple[int, str]] = set()
    for node in unit.nodes(*_NAME_NODES):
        name = text_of(node)
        api = exact.get(name)
        if api is None:
            if not (prefixes and name.startswith(prefixes)):
                continue
            api = next((a for a in apis if _matches(name, a)), None)
            if api is None:
                continue
        line = node.start_point[0]
        if (line, api.get("library", "")) in lines:
            continue
        lines.add((line, api.get("library", "")))
        yield Hit(
            node.start_byte,
            node.end_byte,
            {"what": name, "library": api.get("library", ""), "note": api.get("note", "")},
        )
