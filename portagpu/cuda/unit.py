"""One parsed CUDA source plus what every checker asks of it: nodes by type,
#define values, HIP-guarded regions and declarations in scope."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from portagpu.cuda.parser import LineIndex, parse, text_of, walk
from portagpu.lines import line_starts_bytes

# Macros whose presence in an #if/#ifdef/#elif condition marks code written for HIP;
# such a conditional block, with its #else/#elif counterparts, is not a finding.
DEFAULT_GUARD_MACROS = (
    "__HIP_PLATFORM_AMD__",
    "__HIP_PLATFORM_HCC__",
    "__HIP_PLATFORM_NVIDIA__",
    "__HIP_PLATFORM_NVCC__",
    "__HIPCC__",
    "__HIP__",
    "__HIP_DEVICE_COMPILE__",
    "USE_ROCM",
    "__HIP_ARCH__",
    "HIP_VERSION",
    "PORTAGPU_HIP",
)

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)$")


@dataclass
class Hit:
    """A checker's result: a byte span of the unit and the message's values."""

    start: int
    end: int
    values: dict[str, Any] = field(default_factory=dict)
    replacement: str | None = None  # a suggested edit of exactly [start, end)


# Besides those names, a condition is a vendor switch when it names a macro
# spelled like one (USE_ROCM, MMCV_WITH_HIP, BNB_HIP, GGML_USE_HIP,
# TENSORFLOW_USE_ROCM, __AMDGCN_WAVEFRONT_SIZE, __GFX9__, __gfx90a__) or tests
# the warp width (`#if WARP_SIZE == 64`).
_SWITCH_NAME = re.compile(r"(?:^|_)(?:HIP|HIPCC|ROCM|ROCm|AMD|AMDGPU|AMDGCN|HCC|GFX\d*)(?:_|$)|^__gfx\w+__$")
_WIDTH_TEST = re.compile(r"\b\w*(?:WARP|WAVE|[Ww]arp|[Ww]ave)\w*\s*(?:==|!=|>=|<=|>|<)\s*(?:32|64)\b")
_IDENT = re.compile(r"[A-Za-z_]\w*")
DEFINE_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)  # the name it defines


def is_switch_condition(condition: str, names: frozenset[str] = frozenset()) -> bool:
    """Does an #if/#elif condition select code by GPU vendor or warp width?"""
    if _WIDTH_TEST.search(condition):
        return True
    return any(word in names or _SWITCH_NAME.search(word) for word in _IDENT.findall(condition))


def _conditional_chains(text: str, names: frozenset[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    stack: list[list[Any]] = []  # [chain start, guarded?, inside an `#if 0` branch?]
    data = text.encode("utf-8", "surrogatepass")
    starts = line_starts_bytes(data)  # \r\n, \r and \n end a line, as for a compiler
    ends = [_content_end(data, following) for following in starts[1:]] + [len(data)]
    i = 0
    while i < len(starts):
        start = starts[i]
        raw = data[start:ends[i]]
        # join backslash continuations of a directive
        while raw.endswith(b"\\") and i + 1 < len(starts):
            i += 1
            raw = raw[:-1] + b" " + data[starts[i]:ends[i]]
        line = raw.decode("utf-8", "replace")
        match = _DIRECTIVE.match(line) if "#" in line else None
        if match:
            kind, rest = match.group(1), match.group(2)
            if kind in ("else", "endif") or kind.startswith("elif"):
                if stack and stack[-1][2]:  # the #if 0 branch ends here
                    spans.append((stack[-1][0], start))
                    stack[-1][2] = False
            if kind.startswith("if"):
                dead = kind == "if" and _is_dead(rest)
                stack.append([start, is_switch_condition(rest, names), dead])
            elif kind.startswith("elif"):
                if stack and is_switch_condition(rest, names):
                    stack[-1][1] = True
            elif kind == "endif" and stack:
                chain_start, guarded, _ = stack.pop()
                if guarded:
                    spans.append((chain_start, ends[i]))
        i += 1
    return spans


def _is_dead(condition: str) -> bool:
    """`#if 0`: a branch the compiler never sees (comments aside)."""
    return re.sub(r"/\*.*?\*/|//.*", "", condition).strip() in ("0", "(0)")


def _content_end(data: bytes, next_start: int) -> int:
    """Where a line's text ends, given where the next line starts."""
    if data[next_start - 2:next_start] == b"\r\n":
        return next_start - 2
    return next_start - 1


def guarded_spans(text: str, macros: tuple[str, ...]) -> list[tuple[int, int]]:
    """Byte spans of #if chains whose condition is a vendor switch (a HIP guard
    macro of `macros`, or one named like it, or a warp-width test), both
    branches. A macro #defined only inside such chains (`HAVE_CP_ASYNC` under
    `#if !defined(GGML_USE_HIP)`) is a switch too.

    Only directive lines are read (conditional nesting), so it works even where
    a conditional splits a C construct and tree-sitter cannot build a tree.
    """
    if "#" not in text:
        return []
    names = frozenset(macros)
    spans = _conditional_chains(text, names)
    if not spans:
        return spans
    derived = _defined_inside(text, spans) - names
    if derived:
        spans = _conditional_chains(text, names | derived)
    return _merged(spans)


def _defined_inside(text: str, spans: list[tuple[int, int]]) -> frozenset[str]:
    """Macros #defined only inside the given spans (never outside them)."""
    inside: set[str] = set()
    outside: set[str] = set()
    for match in DEFINE_DIRECTIVE.finditer(text):
        at = len(text[: match.start()].encode("utf-8", "surrogatepass")) if not text.isascii() else match.start()
        (inside if any(a <= at < b for a, b in spans) else outside).add(match.group(1))
    return frozenset(inside - outside)


def switch_macros_defined(text: str, macros: tuple[str, ...] = ()) -> frozenset[str]:
    """The project macros a header #defines only inside a vendor switch
    (`#if defined(__HIP_PLATFORM_AMD__) #define X_HIP #else #define X_CUDA #endif`):
    files that include it test them as switches."""
    if "#" not in text or "define" not in text:
        return frozenset()
    spans = _conditional_chains(text, frozenset(macros))
    return _defined_inside(text, spans) if spans else frozenset()


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping: a guarded chain nested in another is inside it."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


# an #include of a ROCm header, which only a HIP compile finds
_ROCM_INCLUDE = re.compile(
    rb"(?m)^[ \t]*#[ \t]*include[ \t]*[<\"](?:hip|hipblas|hipblaslt|hipcub|hipsparse|hiprand|hipfft|rocblas|rocprim|rocrand|rocwmma)/"
)

# every byte a space but \n and \r (bytes.translate: C speed, not a loop per byte)
_BLANK_BUT_LINE_BREAKS = bytes(b if b in (10, 13) else 32 for b in range(256))

# a conditional directive with its backslash continuations
_CONDITIONAL_BYTES = re.compile(
    rb"(?m)^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(?:[^\n]*\\\n)*[^\n]*"
)


def blank_conditionals(data: bytes) -> bytes:
    """The source with #if/#else/#endif lines turned to spaces, byte offsets kept."""
    return _CONDITIONAL_BYTES.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), data)


def _loose_errors(root: Any) -> Iterator[tuple[Any, int]]:
    """Each ERROR node holding tokens tree-sitter could place in no construct,
    with the bytes of those tokens. Comments are not code: a long comment
    block inside an ERROR must not make a file look broken."""
    for node in _error_nodes(root):
        if node.type != "ERROR":
            continue
        loose = sum(
            len(child.text.strip())
            for child in node.children
            if child.child_count == 0 and not child.is_missing and child.text and child.type != "comment"
        )
        if loose:
            yield node, loose


def loose_error_bytes(root: Any) -> tuple[int, int | None]:
    """Bytes of tokens tree-sitter could place in no construct (sitting loose
    under ERROR nodes), and where the first such ERROR starts."""
    loose, first = 0, None
    for node, size in _loose_errors(root):
        loose += size
        first = node.start_byte if first is None else min(first, node.start_byte)
    return loose, first


def parse_preferring_structure(text: str) -> Any:
    """Parse `text`; where conditionals defeat tree-sitter (a file-wide `#if`
    wrapping `#pragma once`, a branch that splits a declaration), parse it
    again with the conditional lines blanked and keep the cleaner tree. HIP
    guards are found from the directive lines themselves (guarded_spans), so
    the blanked tree loses nothing the checkers need. A conditional can only
    split a construct where the broken construct meets it: when no error
    touches a conditional's line, the second parse is not made (on torch's
    CUDA files it never helped there)."""
    tree = parse(text)
    if not tree.root_node.has_error or "#" not in text:
        return tree
    errors = [(node.start_byte, node.end_byte, size) for node, size in _loose_errors(tree.root_node)]
    if not errors:  # only tokens tree-sitter invented: the structure stands
        return tree
    data = text.encode("utf-8", "surrogatepass")
    directives = [(m.start(), m.end()) for m in _CONDITIONAL_BYTES.finditer(data)]
    # touching: overlapping, or only the line break between them
    if not any(begin <= end + 1 and start <= stop + 1 for begin, stop, _ in errors for start, end in directives):
        return tree
    flat = parse(blank_conditionals(data))
    return flat if loose_error_bytes(flat.root_node)[0] < sum(size for _, _, size in errors) else tree


def _error_nodes(root: Any, named: bool = True) -> Iterator[Any]:
    """The nodes of subtrees that hold an error (ERROR or MISSING), the
    error-free ones skipped: most of a big file is never visited."""
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error and not node.is_missing:
            continue
        if node.is_named or not named:
            yield node
        stack.extend(reversed(node.children))


class CudaUnit:
    """A CUDA source parsed once; checkers share its indexes."""

    def __init__(self, text: str, guard_macros: tuple[str, ...] = ()) -> None:
        self.text = text
        self.tree = parse_preferring_structure(text)
        self.root = self.tree.root_node
        self.guard_macros = tuple(guard_macros)
        self.by_type: dict[str, list[Any]] = defaultdict(list)
        for node in walk(self.root):
            self.by_type[node.type].append(node)
        self.in_macros = False  # True for the unit of macro bodies (macro_unit)
        self._origin = self  # the unit whose directives guard these bytes

    # positions and guards are needed only where a checker hits (or a file
    # is broken): most units are never asked, so they are made on first use

    @cached_property
    def index(self) -> LineIndex:
        return LineIndex(self.text)

    @cached_property
    def guards(self) -> list[tuple[int, int]]:
        if self._origin is not self:  # macro bodies: the source's own directives
            return self._origin.guards
        return guarded_spans(self.text, tuple(DEFAULT_GUARD_MACROS) + self.guard_macros)

    @cached_property
    def macro_unit(self) -> CudaUnit | None:
        """The bodies of function-like `#define`s as code, or None if there are
        none. tree-sitter keeps a macro body as opaque text, so a shuffle loop
        written as a macro would go unseen. This unit's text is the original
        with every byte outside those bodies blanked (line breaks kept), each
        `#define NAME(params)` turned into `void NAME(){` in the room it
        leaves, continuation backslashes blanked and a `}` after the body:
        byte offsets are the original's, so hits, positions and edits carry
        over unchanged (positions and guards come from the original)."""
        defs = self.nodes("preproc_function_def")
        if not defs:
            return None
        data = self.index.data
        out = bytearray(data.translate(_BLANK_BUT_LINE_BREAKS))
        for node in defs:
            name, body = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is None or body is None:
                continue
            head = b"void " + data[name.start_byte:name.end_byte] + b"(){"
            if len(head) > body.start_byte - node.start_byte:
                continue
            out[node.start_byte:node.start_byte + len(head)] = head
            code = re.sub(rb"\\(?=\r\n|\r|\n)", b" ", data[body.start_byte:body.end_byte])
            out[body.start_byte:body.end_byte] = code
            if body.end_byte < len(out):
                out[body.end_byte] = ord("}")  # over the line break that ends the directive
            else:
                out += b"}"
        unit = CudaUnit(bytes(out).decode("utf-8", "surrogatepass"), self.guard_macros)
        unit.index, unit.in_macros, unit._origin = self.index, True, self
        return unit

    @property
    def origin(self) -> CudaUnit:
        """The source file's unit: itself, or for macro bodies the file's."""
        return self._origin

    def units(self) -> list[CudaUnit]:
        """This unit, then its macro bodies' (if any): what checkers run over."""
        return [self] if self.macro_unit is None else [self, self.macro_unit]

    def editable(self, start: int, end: int) -> bool:
        """May [start, end) be replaced? Not across a line break inside a macro
        body, where it would drop the continuation backslash."""
        if not self.in_macros:
            return True
        chunk = self.index.data[start:end]
        return b"\n" not in chunk and b"\r" not in chunk

    # -- queries ---------------------------------------------------------------
    def nodes(self, *types: str) -> list[Any]:
        if len(types) == 1:
            return self.by_type.get(types[0], [])
        out = [n for t in types for n in self.by_type.get(t, [])]
        out.sort(key=lambda n: n.start_byte)
        return out

    @cached_property
    def amd_only(self) -> bool:
        """Does the source call an AMDGCN builtin (`__builtin_amdgcn_wavefrontsize()`)
        or include a ROCm header (`<hip/hip_runtime.h>`, `<hipblas/hipblas.h>`)
        outside every HIP switch? Then it compiles for AMD alone: it is HIP
        code already, not CUDA to port (a project's per-vendor HIP header, a
        shim mapping cuBLAS names to hipBLAS)."""
        data = self.index.data
        at = data.find(b"__builtin_amdgcn_")
        while at >= 0:
            if not self.is_guarded(at):
                return True
            at = data.find(b"__builtin_amdgcn_", at + 1)
        if b"include" not in data:
            return False
        return any(not self.is_guarded(m.start()) for m in _ROCM_INCLUDE.finditer(data))

    def is_guarded(self, start: int) -> bool:
        # guards are sorted and disjoint (guarded_spans merges nested chains)
        index = bisect_right(self._guard_starts, start) - 1
        return index >= 0 and start < self.guards[index][1]

    @cached_property
    def _guard_starts(self) -> list[int]:
        return [a for a, _ in self.guards]

    def unguarded(self, hits: Iterable[Hit]) -> Iterator[Hit]:
        """One checker's hits outside HIP-guarded code, each span once."""
        seen: set[tuple[int, int]] = set()
        for hit in hits:
            if not self.is_guarded(hit.start) and (hit.start, hit.end) not in seen:
                seen.add((hit.start, hit.end))
                yield hit

    def calls(self, names: frozenset[str] | set[str]) -> list[tuple[str, Any]]:
        """(callee name, call_expression) for calls to plain names in `names`."""
        out = []
        for call in self.by_type.get("call_expression", []):
            name = callee_name(call)
            if name in names:
                out.append((name, call))
        return out

    @cached_property
    def macros(self) -> dict[str, Any]:
        """#define NAME value -> the preproc_def node (last definition wins);
        for macro bodies, the file's (they use the file's constants)."""
        if self._origin is not self:
            return self._origin.macros
        defs = {}
        for node in self.by_type.get("preproc_def", []):
            name = node.child_by_field_name("name")
            if name is not None:
                defs[text_of(name)] = node
        return defs

    def macro_value(self, name: str) -> str | None:
        node = self.macros.get(name)
        if node is None:
            return None
        value = node.child_by_field_name("value")
        return strip_comments(text_of(value)) if value is not None else ""

    def declarations_in_scope(self, node: Any) -> dict[str, tuple[Any, Any]]:
        """name -> (declaration node, initializer or None) visible from node:
        the enclosing function's declarations and parameters, then file scope."""
        found: dict[str, tuple[Any, Any]] = {}
        function = enclosing_function(node)
        scopes = ([function] if function is not None else []) + [self.root]
        for scope in scopes:
            for decl in self._declarations(scope):
                for name, init in declared_names(decl):
                    found.setdefault(name, (decl, init))
        return found

    def _declarations(self, scope: Any) -> list[Any]:
        key = (scope.start_byte, scope.end_byte)
        cache = self.__dict__.setdefault("_decl_cache", {})
        if key not in cache:
            if scope == self.root:
                decls = [
                    d for d in self.by_type.get("declaration", [])
                    if enclosing_function(d) is None
                ]
            else:
                decls = [
                    d for d in self.by_type.get("declaration", []) + self.by_type.get(
                        "parameter_declaration", [])
                    if scope.start_byte <= d.start_byte < scope.end_byte
                ]
            cache[key] = decls
        return cache[key]


_COMMENT = re.compile(r"//.*$|/\*.*?\*/", re.DOTALL | re.MULTILINE)


def strip_comments(macro_value: str) -> str:
    """A #define's value without its comments (tree-sitter keeps them in preproc_arg)."""
    return _COMMENT.sub(" ", macro_value).strip()


def callee_name(call: Any) -> str:
    function = call.child_by_field_name("function")
    if function is None:
        return ""
    if function.type == "identifier":
        return text_of(function)
    if function.type == "qualified_identifier":
        name = function.child_by_field_name("name")
        return callee_name_of(name)
    if function.type == "template_function":
        return text_of(function.child_by_field_name("name"))
    return ""


def callee_name_of(node: Any) -> str:
    if node is None:
        return ""
    if node.type == "template_function":
        return text_of(node.child_by_field_name("name"))
    if node.type == "qualified_identifier":
        return callee_name_of(node.child_by_field_name("name"))
    return text_of(node)


def call_args(call: Any) -> list[Any]:
    args = call.child_by_field_name("arguments")
    return list(args.named_children) if args is not None else []


def enclosing_function(node: Any) -> Any:
    parent = node.parent
    while parent is not None:
        if parent.type in ("function_definition", "lambda_expression"):
            return parent
        parent = parent.parent
    return None


def function_declarator(function: Any) -> Any:
    """The function_declarator of a function_definition (under any pointer or
    reference declarators of its return type), or None."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def function_name(function: Any) -> str:
    """The name of a function_definition (`f`, `ns::f` -> "f", a template's own name)."""
    declarator = function_declarator(function)
    return callee_name_of(declarator.child_by_field_name("declarator")) if declarator is not None else ""


def parameter_names(parameters: Any) -> list[str]:
    """The names in a function's or template's parameter list, by position
    ("" for an unnamed one): `(T v, unsigned mask = FULL)`, `<int warpSize, int N>`."""
    names = []
    for parameter in parameters.named_children if parameters is not None else ():
        inner = parameter.child_by_field_name("declarator") or parameter.child_by_field_name("name")
        while inner is not None and inner.type not in ("identifier", "type_identifier"):
            inner = inner.child_by_field_name("declarator")
        if inner is None:  # `template <int warpSize>`: the name may be a bare child
            inner = next((c for c in parameter.named_children if c.type == "identifier"), None)
        names.append(text_of(inner) if inner is not None else "")
    return names


def sole_return(function: Any) -> Any:
    """The value of a function whose body is only `return <value>;`, or None."""
    body = function.child_by_field_name("body")
    statements = body.named_children if body is not None else []
    if len(statements) == 1 and statements[0].type == "return_statement" and statements[0].named_children:
        return statements[0].named_children[0]
    return None


def declared_names(decl: Any) -> list[tuple[str, Any]]:
    """(name, initializer-or-None) for each declarator of a declaration; a
    class member's initializer (`static constexpr int kWarp = 32;`) is the
    field declaration's own default value."""
    out = []
    defaults = decl.children_by_field_name("default_value") if decl.type == "field_declaration" else []
    for at, child in enumerate(decl.children_by_field_name("declarator")):
        init = defaults[at] if at < len(defaults) else None
        node = child
        if node.type == "init_declarator":
            init = node.child_by_field_name("value")
            node = node.child_by_field_name("declarator")
        while node is not None and node.type not in ("identifier", "field_identifier"):
            inner = node.child_by_field_name("declarator")
            node = inner if inner is not None else (
                node.named_children[-1] if node.named_children else None
            )
        if node is not None:
            if init is not None and init.type == "initializer_list" and init.named_children:
                init = init.named_children[0]  # unsigned m{0xffffffff}
            out.append((text_of(node), init))
    return out


def declared_type(decl: Any) -> str:
    """The type words of a declaration, qualifiers dropped: 'unsigned int'."""
    words = []
    for child in decl.children:
        if child.type in ("type_qualifier", "storage_class_specifier", "attribute_specifier"):
            continue
        if child.type in ("primitive_type", "sized_type_specifier", "type_identifier",
                          "qualified_identifier", "placeholder_type_specifier"):
            words.append(" ".join(text_of(child).split()))
    return " ".join(words)


THIRTY_TWO_BIT_TYPES = frozenset({
    "unsigned", "unsigned int", "int", "signed", "signed int", "uint32_t", "int32_t",
    "uint", "std::uint32_t", "std::int32_t", "unsigned long int32", "long", "unsigned long",
    # the usual project typedefs of a 32-bit word (`typedef unsigned int U32;`)
    "U32", "u32", "uint32", "UINT32", "S32", "s32", "int32", "INT32",
})
# `long` is 64-bit on LP64 Linux, but not on Windows where CUDA also builds: keep it out.
THIRTY_TWO_BIT_TYPES = THIRTY_TWO_BIT_TYPES - {"long", "unsigned long", "unsigned long int32"}


def is_32bit_type(type_text: str) -> bool:
    return type_text in THIRTY_TWO_BIT_TYPES


def unwrap(node: Any) -> Any:
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def outermost(node: Any, through: tuple[str, ...] = ("parenthesized_expression",)) -> Any:
    """`node` climbed through the wrappers around it (parentheses, and casts when
    asked): the expression its parent actually uses. The inverse of `unwrap`."""
    while node.parent is not None and node.parent.type in through:
        node = node.parent
    return node


def int_value(node: Any) -> tuple[int, str] | None:
    """(value, suffix) of an integer literal node, else None."""
    node = unwrap(node)
    if node is None or node.type != "number_literal":
        return None
    return parse_int(text_of(node))


_FOLDABLE = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "<<": lambda a, b: a << b if 0 <= b < 64 else None, ">>": lambda a, b: a >> b if 0 <= b < 64 else None,
    "|": lambda a, b: a | b, "&": lambda a, b: a & b,
}


def const_value(node: Any, depth: int = 0) -> int | None:
    """The value of an integer constant expression of literals (`32 - 1`, `(1U << 5)`)."""
    node = unwrap(node)
    if node is None or depth > 8:
        return None
    if node.type == "number_literal":
        parsed = int_value(node)
        return parsed[0] if parsed else None
    if node.type == "binary_expression":
        op = node.child_by_field_name("operator")
        fold = _FOLDABLE.get(text_of(op)) if op is not None else None
        left = const_value(node.child_by_field_name("left"), depth + 1)
        right = const_value(node.child_by_field_name("right"), depth + 1)
        return fold(left, right) if fold and left is not None and right is not None else None
    return None


_FLOAT_LITERAL = re.compile(r"(\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?[fFlL]?")


def float_value(node: Any) -> float | None:
    """The value of a floating literal (`32.f`, `32.0f`, `32.`); None for
    anything else, integers included."""
    node = unwrap(node)
    if node is None or node.type != "number_literal":
        return None
    text = text_of(node)
    if "." not in text and not text.endswith(("f", "F")) or text.startswith(("0x", "0X")):
        return None
    match = _FLOAT_LITERAL.fullmatch(text)
    return float(text.rstrip("fFlL")) if match else None


_CONST_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|\s*(<<|>>|[-+*|&()])|\s*([A-Za-z_]\w*)")


def eval_constant_text(text: str, lookup: Any = None, depth: int = 0) -> int | None:
    """A #define value's integer, macros expanded through `lookup(name) -> text`:
    `(1U << LOG2_WARP)` with LOG2_WARP 5 is 32. None when not a constant."""
    tokens: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _CONST_TOKEN.match(text, pos)
        if match is None:
            return None
        number, op, name = match.groups()
        if name is not None:
            value = lookup(name) if lookup is not None and depth < 4 else None
            inner = eval_constant_text(value, lookup, depth + 1) if value else None
            if inner is None:
                return None
            tokens.append(str(inner))
        else:
            parsed = parse_int(number) if number else None
            if number and parsed is None:
                return None
            tokens.append(str(parsed[0]) if parsed else op)
        pos = match.end()
    if not tokens:
        return None
    try:
        return _eval_tokens(tokens)
    except (ValueError, IndexError, ZeroDivisionError):
        return None


def _eval_tokens(tokens: list[str]) -> int | None:
    """Precedence climbing over + - * << >> & | and parentheses."""
    levels = (("|",), ("&",), ("<<", ">>"), ("+", "-"), ("*",))
    pos = 0

    def atom() -> int:
        nonlocal pos
        token = tokens[pos]
        pos += 1
        if token == "(":
            value = expr(0)
            if tokens[pos] != ")":
                raise ValueError(")")
            pos += 1
            return value
        if token == "-":
            return -atom()
        return int(token)

    def expr(level: int) -> int:
        nonlocal pos
        if level == len(levels):
            return atom()
        value = expr(level + 1)
        while pos < len(tokens) and tokens[pos] in levels[level]:
            op = tokens[pos]
            pos += 1
            value = _FOLDABLE[op](value, expr(level + 1))
            if value is None:
                raise ValueError(op)
        return value

    result = expr(0)
    return result if pos == len(tokens) else None


def parse_int(text: str) -> tuple[int, str] | None:
    match = re.fullmatch(r"(0[xX][0-9a-fA-F']+|0[bB][01']+|0[0-7']*|[1-9][0-9']*)([uUlL]*)",
                         text.strip())
    if not match:
        return None
    digits = match.group(1).replace("'", "")
    base = 16 if digits[:2] in ("0x", "0X") else 2 if digits[:2] in ("0b", "0B") else (
        8 if len(digits) > 1 and digits[0] == "0" else 10)
    try:
        return int(digits, base), match.group(2).lower()
    except ValueError:
        return None
