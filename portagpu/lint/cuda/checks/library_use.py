"""PG602-PG610: NVIDIA libraries that need a swap on AMD (cub, cuBLAS, cuDNN,
cuRAND, cuSPARSE, cuFFT, NVRTC, WMMA, CUTLASS/CuTe).

Data-driven from the rule's options:
  includes:   header prefixes, e.g. ["cub/", "cublas"]
  namespaces: C++ namespaces, e.g. ["cub"]
  prefixes:   C API name prefixes, e.g. ["cublas"]
  calls:      also report each call through the namespaces, once per line
Each matching #include is reported; with no include in the source (a header
pulled in elsewhere, or an embedded string), the library's first use is,
except inside `#ifdef CUBLAS_API_H_`-style blocks: code that compiles only
where the library's own header was included (helpers shared by many
programs) does not make a file need the library.
A project's own header named after a library (`cublas_common.h`,
`cudnn_utils.h`) is not the library. A macro body (`#define CUBLAS_CHECK(x)`)
in a file that includes the library reports nothing of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from portagpu.cuda.parser import text_of
from portagpu.cuda.unit import CudaUnit, Hit, guarded_spans
from portagpu.lint.cuda.registry import checker
from portagpu.lint.model import Rule


def _options(rule: Rule) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    opts = rule.options
    return (
        tuple(opts.get("includes", ())),
        tuple(opts.get("namespaces", ())),
        tuple(opts.get("prefixes", ())),
    )


# words that make `<library>_<word>.h` a project's own header, not the library's
_PROJECT_WORDS = re.compile(
    r"(?:^|_)(?:common|utils?|helpers?|wrappers?|compat|shims?|impl|internal|checks?|errors?|"
    r"handles?|context|manager|tests?|defs?|types)(?:_|$)",
    re.IGNORECASE,
)


def is_library_header(header: str, includes: tuple[str, ...]) -> bool:
    for prefix in includes:
        if not header.startswith(prefix):
            continue
        if prefix.endswith("/"):  # cub/..., cutlass/...: the library's own folder
            return True
        stem = header[len(prefix) :].rsplit(".", 1)[0]
        return not _PROJECT_WORDS.search(stem)
    return False


def _header(node) -> str:
    path = node.child_by_field_name("path")
    return text_of(path).strip('<>"') if path is not None else ""


@checker("library_use")
def library_use(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    lines: set[int] = set()
    for hit in _library_use(unit, rule):
        lines.add(unit.index.position(hit.start)[0])
        yield hit
    if rule.options.get("calls"):
        # a library of templates (CUTLASS/CuTe) breaks at each call into it,
        # wherever its include is
        _, namespaces, _ = _options(rule)
        library = rule.options.get("library", rule.name)
        for call in unit.nodes("call_expression"):
            function = call.child_by_field_name("function")
            name = text_of(function).split("::", 1) if function is not None else []
            if len(name) < 2 or name[0].strip() not in namespaces:
                continue
            line = unit.index.position(call.start_byte)[0]
            if line not in lines and not unit.is_guarded(call.start_byte):
                lines.add(line)
                what = text_of(function).split("<", 1)[0]
                yield Hit(
                    function.start_byte, function.end_byte, {"library": library, "what": what}
                )


def _library_use(unit: CudaUnit, rule: Rule) -> Iterator[Hit]:
    includes, namespaces, prefixes = _options(rule)
    library = rule.options.get("library", rule.name)
    any_include = False
    for node in unit.nodes("preproc_include"):
        header = _header(node)
        if is_library_header(header, includes):
            any_include = True
            path = node.child_by_field_name("path")
            yield Hit(path.start_byte, path.end_byte, {"library": library, "what": header})
    if any_include or _file_includes(unit, includes):
        return
    # no include here (a header pulled in elsewhere, an embedded string): the
    # library's first use outside HIP-guarded code, once per file
    conditional = _library_conditionals(unit, prefixes)
    names = ("namespace_identifier", "using_declaration") if namespaces else ()
    names += ("identifier", "type_identifier") if prefixes else ()
    first = None
    for kind in names:  # each kind's nodes come in file order: its first hit is its earliest
        for node in unit.nodes(kind):
            if first is not None and node.start_byte >= first[0].start_byte:
                break
            what = _library_name(node, namespaces, prefixes)
            if (
                what is not None
                and not unit.is_guarded(node.start_byte)
                and not any(a <= node.start_byte < b for a, b in conditional)
            ):
                first = (node, what)
                break
    if first is not None:
        node, what = first
        yield Hit(node.start_byte, node.end_byte, {"library": library, "what": what})


def _library_name(node, namespaces: tuple[str, ...], prefixes: tuple[str, ...]) -> str | None:
    """What names the library at `node`: `wmma::`, `using namespace nvcuda;`, a prefixed name."""
    if node.type == "using_declaration":  # `using namespace nvcuda;` (`using nvcuda::wmma::fragment;`)
        target = node.named_children[-1] if node.named_children else None
        head = text_of(target).split("::", 1)[0].strip() if target is not None else ""
        return f"using {text_of(target)}" if head in namespaces else None
    name = text_of(node)
    if node.type == "namespace_identifier":
        return f"{name}::" if name in namespaces else None
    return name if name.startswith(prefixes) else None


_INCLUDE = re.compile(rb'(?m)^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]')


def _file_includes(unit: CudaUnit, includes: tuple[str, ...]) -> bool:
    """The file a macro body comes from includes the library: its include was
    the finding, so the body's uses are not first uses. (A macro body is
    checked as a unit of its own, without the file's #includes.)"""
    if not unit.in_macros and "file_data" not in unit.__dict__:
        return False
    data = unit.__dict__.get("file_data") or unit.index.data
    return any(
        is_library_header(m.group(1).decode("utf-8", "replace"), includes)
        for m in _INCLUDE.finditer(data)
    )


def _library_conditionals(unit: CudaUnit, prefixes: tuple[str, ...]) -> list[tuple[int, int]]:
    """Spans of #if blocks whose condition names a macro of the library itself."""
    if not prefixes or "#" not in unit.text:
        return []
    words = re.findall(r"(?m)^[ \t]*#[ \t]*(?:if|ifdef|elif)\b(.*)$", unit.text)
    macros = {
        w
        for line in words
        for w in re.findall(r"\w+", line)
        if any(p.lower() in w.lower() for p in prefixes)
    }
    return guarded_spans(unit.text, tuple(sorted(macros))) if macros else []
