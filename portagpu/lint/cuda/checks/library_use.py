"""PG602-PG610: NVIDIA libraries that need a swap on AMD (cub, cuBLAS, cuDNN,
cuRAND, cuSPARSE, cuFFT, NVRTC, WMMA, CUTLASS/CuTe).

Data-driven from the rule's options:
  includes:   header prefixes, e.g. ["cub/", "cublas"]
  namespaces: C++ namespaces, e.g. ["cub"]
  prefixes:   C API name prefixes, e.g. ["cublas"]
Each matching #include is reported; with no include in the source (a header
pulled in elsewhere, or an embedded string), the first use of each API is.
"""

from __future__ import annotations

from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit
from portagpu.lint.cuda.registry import checker
from portagpu.lint.model import Rule


def _options(rule: Rule) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    opts = rule.options
    return (tuple(opts.get("includes", ())), tuple(opts.get("namespaces", ())),
            tuple(opts.get("prefixes", ())))


def _header(node) -> str:
    path = node.child_by_field_name("path")
    return text_of(path).strip('<>"') if path is not None else ""


@checker("library_use")
def library_use(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    includes, namespaces, prefixes = _options(rule)
    library = rule.options.get("library", rule.name)
    any_include = False
    for node in unit.nodes("preproc_include"):
        header = _header(node)
        if any(header.startswith(p) for p in includes):
            any_include = True
            path = node.child_by_field_name("path")
            yield Hit(path.start_byte, path.end_byte, {"library": library, "what": header})
    if any_include:
        return
    seen: set[str] = set()
    if namespaces:
        for node in unit.nodes("namespace_identifier"):
            name = text_of(node)
            if name in namespaces and name not in seen:
                seen.add(name)
                yield Hit(node.start_byte, node.end_byte, {"library": library, "what": f"{name}::"})
    if prefixes:
        for node in unit.nodes("identifier", "type_identifier"):
            name = text_of(node)
            if name in seen or not name.startswith(prefixes):
                continue
            seen.add(name)
            yield Hit(node.start_byte, node.end_byte, {"library": library, "what": name})
