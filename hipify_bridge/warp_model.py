"""One warp model per kernel, chosen for correctness.

native     the kernel is warp-generic: every 32 that means "a warp" becomes
           PORTAGPU_WARP_SIZE (64 on CDNA, 32 on RDNA and NVIDIA). Fastest.
logical32  something fixes the warp at 32 lanes, so the kernel keeps 32-lane
           warps on a wave64: shuffles get width 32, ballots/any/all/activemask
           read this lane's 32-lane half, `warpSize` reads 32 (what SCALE does).

A kernel gets logical32 when it, or a device function it reaches, uses a
32-thread tile (`tiled_partition<32>`, `thread_block_tile<32>`), a shuffle
with an explicit width of 32 or an unrolled shuffle chain from offset 16, a
`__shared__` array of literal size 32, `blockDim.x == 32`, 32-bit lane masks
(`1u << lane`), a macro derived from a warp constant that must stay 32, or
when host code launches it with a shape built from 32. Functions that share a
warp-level helper share its model (one definition cannot be both), so a
logical32 kernel makes the other callers of its helpers logical32 too.
Host code is never given a device-pass value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from portagpu.cuda.launches import declared_value, launches
from portagpu.cuda.parser import text_of, walk
from portagpu.cuda.unit import (
    CudaUnit,
    call_args,
    callee_name,
    declared_names,
    enclosing_function,
    int_value,
    parse_int,
    strip_comments,
    unwrap,
)
from portagpu.cuda.warp.common import BALLOTS, MASK_SYNC_FUNCTIONS, SHUFFLES

NATIVE, LOGICAL = "native", "logical32"
WARP_CALLS = (
    SHUFFLES
    | BALLOTS
    | MASK_SYNC_FUNCTIONS
    | frozenset(
        {
            "__activemask",
            "__any",
            "__all",
            "tiled_partition",
            "reduce",
            "inclusive_scan",
            "exclusive_scan",
            "coalesced_threads",
        }
    )
)
TILE_TEMPLATES = frozenset({"tiled_partition", "thread_block_tile"})
WARP_CONSTANT_NAME = re.compile(
    r"^(?:(k_?)?(cuda_?)?(warp|wave(front)?)_?(size|width|sz|len|lanes|threads)"
    r"|(k_?)?(num_?)?(threads|lanes)_?(per|in)_?(warp|wave(front)?)"
    r"|(k_?)?(warp|wave)_?(thread|lane)_?(count|num))$",
    re.IGNORECASE,
)
LANEISH = re.compile(r"lane|tid|thread|idx", re.IGNORECASE)
_QUALIFIERS = re.compile(r"\b(__global__|__device__|__host__)\b")


@dataclass
class Function:
    key: str  # the source it is defined in
    name: str
    kind: str  # kernel | device | host-device | host
    node: Any
    line: int
    evidence: list[str] = field(default_factory=list)  # warp-width code in it
    reasons: list[str] = field(default_factory=list)  # why it needs 32-lane warps
    refs: set[str] = field(default_factory=set)
    uses_warp_size: int = 0  # line of a `warpSize` use, 0 if none

    @property
    def device_side(self) -> bool:
        return self.kind != "host"

    @property
    def span(self) -> tuple[int, int]:
        return self.node.start_byte, self.node.end_byte


@dataclass
class FunctionModel:
    key: str
    name: str
    kind: str
    line: int
    model: str
    why: list[str]
    suspect: list[str]
    start: int
    end: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "function": self.name,
            "kind": self.kind,
            "line": self.line,
            "model": self.model,
            "why": self.why,
            "suspect": self.suspect,
        }


@dataclass
class WarpConstant:
    """A file-scope warp-width constant equal to 32 (#define, const/constexpr)."""

    key: str
    name: str
    node: Any  # the preproc_def or declaration
    literal: Any  # the 32 literal node (None for a #define: see literal_span)
    literal_span: tuple[int, int]
    suffix: str
    derived: set[str] = field(default_factory=set)  # macros whose value uses it
    host_uses: list[int] = field(default_factory=list)  # lines
    rewrite_definition: bool = False


class WarpModels:
    """The models chosen for every function of a set of sources."""

    def __init__(self) -> None:
        self.functions: dict[str, list[FunctionModel]] = {}
        self.constants: dict[str, WarpConstant] = {}

    def at(self, key: str, byte: int) -> FunctionModel | None:
        for fm in self.functions.get(key, ()):
            if fm.start <= byte < fm.end:
                return fm
        return None

    def model_at(self, key: str, byte: int) -> str | None:
        fm = self.at(key, byte)
        return fm.model if fm is not None else None

    def report(self, key: str) -> list[dict[str, Any]]:
        return [fm.to_dict() for fm in self.functions.get(key, ())]


# --- reading one source ----------------------------------------------------------------


def function_kind(node: Any) -> str:
    body = node.child_by_field_name("body")
    head = node.text[: (body.start_byte if body is not None else node.end_byte) - node.start_byte]
    found = set(_QUALIFIERS.findall(head.decode("utf-8", "replace")))
    if "__global__" in found:
        return "kernel"
    if "__device__" in found:
        return "host-device" if "__host__" in found else "device"
    return "host"


def function_name(node: Any) -> str:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in (
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "operator_name",
        "destructor_name",
    ):
        inner = declarator.child_by_field_name("declarator")
        declarator = inner if inner is not None else None
    if declarator is None:
        return ""
    if declarator.type == "qualified_identifier":
        name = declarator.child_by_field_name("name")
        return text_of(name) if name is not None else text_of(declarator)
    return text_of(declarator)


def functions_of(unit: CudaUnit) -> list[Any]:
    """Top-level-ish function definitions (in namespaces, templates, classes), not lambdas."""
    return [n for n in unit.nodes("function_definition") if function_name(n)]


def is_32(node: Any, constants: Mapping[str, Any]) -> bool:
    node = unwrap(node)
    if node is None:
        return False
    value = int_value(node)
    if value is not None:
        return value[0] == 32
    return node.type == "identifier" and text_of(node) in constants


def _literal_32(node: Any) -> bool:
    return _literal(node, 32)


def _literal(node: Any, number: int) -> bool:
    value = int_value(node)
    return value is not None and value[0] == number


def _line(unit: CudaUnit, node: Any) -> int:
    return unit.index.position(node.start_byte)[0]


def _short(node: Any, limit: int = 60) -> str:
    return " ".join(text_of(node).split())[:limit]


def read_function(
    key: str,
    unit: CudaUnit,
    node: Any,
    constants: Iterable[str],
    derived: Iterable[str],
    names: set[str],
) -> Function:
    """What one function does with warps: evidence, logical32 reasons, references."""
    fn = Function(key, function_name(node), function_kind(node), node, _line(unit, node))
    local_32 = {
        name
        for decl in _local_declarations(node)
        for name, init in declared_names(decl)
        if init is not None and WARP_CONSTANT_NAME.match(name) and _literal_32(init)
    }
    known = dict.fromkeys([*constants, *local_32])  # names whose value is 32
    warpish = set(known) | set(derived)
    for child in walk(node):
        kind = child.type
        if kind == "identifier":
            name = text_of(child)
            if (
                name in names
                and child.parent is not None
                and child.parent.type != ("function_declarator")
            ):
                fn.refs.add(name)
            if name == "warpSize":
                fn.uses_warp_size = fn.uses_warp_size or _line(unit, child)
                fn.evidence.append("warpSize")
            elif name in warpish:
                fn.evidence.append(name)
        elif kind in ("template_function", "template_type"):
            name = text_of(child.child_by_field_name("name"))
            if name in names:
                fn.refs.add(name)
            if name in TILE_TEMPLATES:
                args = child.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                if first is not None and first.type == "type_descriptor" and first.named_children:
                    first = first.named_children[0]
                if first is not None and is_32(first, known):
                    fn.reasons.append(f"`{name}<32>` (line {_line(unit, child)})")
                fn.evidence.append(name)
        elif kind == "call_expression":
            _read_call(unit, fn, child, known)
        elif kind == "binary_expression":
            _read_binary(unit, fn, child, known)
        elif kind == "declaration" and any(
            c.type == "type_qualifier" and text_of(c) == "__shared__" for c in child.children
        ):
            for arr in walk(child):
                if arr.type == "array_declarator" and _literal_32(arr.child_by_field_name("size")):
                    fn.reasons.append(
                        f"`__shared__` array of 32 (`{_short(arr)}`, line {_line(unit, arr)})"
                    )
    return fn


def _local_declarations(node: Any) -> Iterable[Any]:
    return (n for n in walk(node) if n.type == "declaration")


def _read_call(unit: CudaUnit, fn: Function, call: Any, known: Mapping[str, Any]) -> None:
    name = callee_name(call)
    if name in WARP_CALLS:
        fn.evidence.append(name)
    args = call_args(call)
    if name in SHUFFLES:
        sync = name.endswith("_sync")
        width_at = 3 if sync else 2
        if len(args) > width_at and is_32(args[width_at], known):
            fn.reasons.append(f"shuffle of width 32 (`{_short(call)}`, line {_line(unit, call)})")
        delta = args[width_at - 1] if len(args) >= width_at else None
        value = int_value(delta) if delta is not None else None
        if value is not None and value[0] == 16:
            fn.reasons.append(f"unrolled shuffle chain from offset 16 (line {_line(unit, call)})")
    elif name == "tiled_partition" and len(args) == 2 and is_32(args[1], known):
        fn.reasons.append(f"`tiled_partition(.., 32)` (line {_line(unit, call)})")


def _read_binary(unit: CudaUnit, fn: Function, node: Any, known: Mapping[str, Any]) -> None:
    op = text_of(node.child_by_field_name("operator"))
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op in ("==", "!=", "<", ">", "<=", ">="):
        sides = [_short(left), _short(right)]
        if (
            any(s.replace(" ", "") == "blockDim.x" for s in sides)
            and (is_32(left, known) or is_32(right, known))
            and op in ("==", "!=", "<=", ">=")
        ):
            fn.reasons.append(f"`{_short(node)}` (line {_line(unit, node)})")
        last = next(
            (
                s
                for s, other in ((left, right), (right, left))
                if _literal(s, 31) and other is not None and LANEISH.search(text_of(other))
            ),
            None,
        )
        if last is not None:
            fn.reasons.append(
                f"`{_short(node)}` names the last lane of a 32-lane warp (line {_line(unit, node)})"
            )
    elif op == "<<":
        value = int_value(left)
        if (
            value is not None
            and value[0] == 1
            and "l" not in value[1]
            and right is not None
            and (LANEISH.search(text_of(right)))
        ):
            fn.reasons.append(f"32-bit lane mask `{_short(node)}` (line {_line(unit, node)})")


# --- warp constants ------------------------------------------------------------------------


def warp_constants(key: str, unit: CudaUnit) -> list[WarpConstant]:
    found = []
    for node in unit.nodes("preproc_def"):
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is None or value is None or not WARP_CONSTANT_NAME.match(text_of(name)):
            continue
        raw = strip_comments(text_of(value)).strip()
        parsed = parse_int(raw.strip("()"))
        match = re.search(rb"\b32[uUlL]*\b", value.text)
        if parsed and parsed[0] == 32 and match:
            start = value.start_byte + match.start()
            found.append(
                WarpConstant(
                    key,
                    text_of(name),
                    node,
                    None,
                    (start, value.start_byte + match.end()),
                    parsed[1],
                )
            )
    for decl in unit.nodes("declaration"):
        if enclosing_function(decl) is not None:
            continue
        for name, init in declared_names(decl):
            if init is not None and WARP_CONSTANT_NAME.match(name) and _literal_32(init):
                literal = unwrap(init)
                found.append(
                    WarpConstant(
                        key,
                        name,
                        decl,
                        literal,
                        (literal.start_byte, literal.end_byte),
                        int_value(literal)[1],
                    )
                )
    return found


def _derived_macros(units: Mapping[str, CudaUnit], names: set[str]) -> dict[str, str]:
    """Macros whose value names a warp constant (or another derived macro): name -> root."""
    derived: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for unit in units.values():
            for node in unit.nodes("preproc_def", "preproc_function_def"):
                name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
                if (
                    name is None
                    or value is None
                    or text_of(name) in derived
                    or (text_of(name) in names)
                ):
                    continue
                words = set(re.findall(r"\w+", text_of(value)))
                root = next((w for w in words if w in names or w in derived), None)
                if root is not None:
                    derived[text_of(name)] = derived.get(root, root)
                    changed = True
    return derived


# --- host launches -------------------------------------------------------------------------


def host_launch_reasons(
    key: str,
    unit: CudaUnit,
    host_functions: list[Any],
    constants: Mapping[str, Any],
    kernels: set[str],
) -> dict[str, list[str]]:
    """kernel name -> reasons: launched from host code with a grid/block
    built from 32, directly or through a macro the host function invokes."""
    out: dict[str, list[str]] = {}
    by_span = {(h.start_byte, h.end_byte): h for h in host_functions}
    for launch in launches(unit):
        caller = enclosing_function(launch.scope)
        host = by_span.get((caller.start_byte, caller.end_byte)) if caller is not None else None
        if host is None or launch.kernel not in kernels:
            continue
        for shape in launch.shapes:
            culprit = _shape_32(unit, shape, constants, 0, launch.scope)
            if culprit:
                out.setdefault(launch.kernel, []).append(
                    f"launched by host `{function_name(host)}` with a 32-based shape "
                    f"(`{_short(shape)}` <- `{culprit}`, line {_line(unit, launch.scope)})"
                )
                break
    return out


def _shape_32(unit: CudaUnit, expr: Any, constants: Mapping[str, Any], depth: int, scope: Any = None) -> str:
    """The first 32 (or warp constant) a launch shape is built from, through
    the values its names are declared with; `scope`: where those names are
    declared, when the shape sits in a macro body."""
    if expr is None or depth > 3:
        return ""
    for node in walk(expr):
        if node.type == "number_literal" and _literal_32(node):
            return _short(node.parent if node.parent is not None else node)
        if node.type == "identifier":
            name = text_of(node)
            if name in constants:
                return name
            value = declared_value(unit, name, scope if scope is not None else node)  # `= expr`, or `dim3 block(32, 8)`'s arguments
            if value is not None and value is not expr:
                found = _shape_32(unit, value, constants, depth + 1)
                if found:
                    return found
    return ""


# --- choosing ------------------------------------------------------------------------------


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def choose_models(units: Mapping[str, CudaUnit]) -> WarpModels:
    """Read every function of every source (one run's translation units and the
    headers they include) and give each device-side function with warp-width
    code one model; see the module docstring."""
    models = WarpModels()
    constants: dict[str, WarpConstant] = {}
    for key, unit in units.items():
        for const in warp_constants(key, unit):
            constants.setdefault(const.name, const)
    derived = _derived_macros(units, set(constants))
    for name, root in derived.items():
        constants[root].derived.add(name)
    known = {**constants, **dict.fromkeys(derived)}  # launch shapes built from either

    defs = {key: functions_of(unit) for key, unit in units.items()}
    names = {function_name(n) for nodes in defs.values() for n in nodes}
    funcs: list[Function] = []
    for key, unit in units.items():
        for node in defs[key]:
            funcs.append(read_function(key, unit, node, constants, derived, names))
    kernels = {f.name for f in funcs if f.kind == "kernel"}
    launch: dict[str, list[str]] = {}
    for key, unit in units.items():
        hosts = [f.node for f in funcs if f.key == key and f.kind == "host"]
        for kernel, reasons in host_launch_reasons(key, unit, hosts, known, kernels).items():
            launch.setdefault(kernel, []).extend(reasons)
    _host_uses(units, constants, derived, funcs)

    by_name: dict[str, list[int]] = {}
    for i, f in enumerate(funcs):
        if f.device_side:
            by_name.setdefault(f.name, []).append(i)
    reach = _reachable_warp_code(funcs, by_name)
    groups = _UnionFind()
    for i, f in enumerate(funcs):
        if f.device_side and reach[i]:
            for j in reach[i]:
                groups.union(i, j)
    logical_roots: dict[int, dict[str, list[str]]] = {}

    def decide() -> None:
        logical_roots.clear()
        for i, f in enumerate(funcs):
            if not (f.device_side and (reach[i] or f.evidence)):
                continue
            own = _own_reasons(f, launch)
            if own:
                entry = logical_roots.setdefault(groups.find(i), {"reasons": [], "owners": []})
                entry["reasons"] += [r for r in own if r not in entry["reasons"]]
                entry["owners"].append(f.name)

    decide()
    # a native function may not read a macro derived from a constant that stays 32
    for _ in range(len(funcs) + 1):
        _decide_definitions(constants, funcs, groups, logical_roots)
        changed = False
        for i, f in enumerate(funcs):
            if not f.device_side or groups.find(i) in logical_roots:
                continue
            for name in set(f.evidence) & set(derived):
                const = constants[derived[name]]
                if not const.rewrite_definition:
                    f.reasons.append(
                        f"`{name}` is built from `{const.name}`, which stays 32 "
                        "(host code or a logical32 kernel uses it)"
                    )
                    changed = True
        if not changed:
            break
        decide()

    for i, f in enumerate(funcs):
        if not f.device_side or not (f.evidence or reach[i]):
            continue
        root = groups.find(i)
        if root in logical_roots:
            why = _why_logical(f, logical_roots[root], launch)
            suspect = []
            if f.uses_warp_size:
                suspect.append(
                    f"uses `warpSize` (line {f.uses_warp_size}) where its warps are 32 lanes "
                    f"({why[0]}): equal on NVIDIA only; translated with 32 for both"
                )
            fm = FunctionModel(f.key, f.name, f.kind, f.line, LOGICAL, why, suspect, *f.span)
        else:
            used = sorted(set(f.evidence))[:5]
            fm = FunctionModel(
                f.key,
                f.name,
                f.kind,
                f.line,
                NATIVE,
                [
                    f"warp-generic (uses {', '.join(used) or 'warp helpers'}): "
                    "widened to the native wavefront"
                ],
                [],
                *f.span,
            )
        models.functions.setdefault(f.key, []).append(fm)
    models.constants = constants
    return models


def _own_reasons(f: Function, launch: dict[str, list[str]]) -> list[str]:
    own = f.reasons + (launch.get(f.name, []) if f.kind == "kernel" else [])
    return list(dict.fromkeys(own))


def _why_logical(
    f: Function, group: dict[str, list[str]], launch: dict[str, list[str]]
) -> list[str]:
    own = _own_reasons(f, launch)
    if own:
        return own
    owners = ", ".join(group["owners"][:3])
    return [f"shares warp helpers with {owners}, which needs 32-lane warps ({group['reasons'][0]})"]


def _reachable_warp_code(funcs: list[Function], by_name: dict[str, list[int]]) -> list[set[int]]:
    """For each device-side function: the warp-code functions it reaches (itself included)."""
    out: list[set[int]] = []
    for i, f in enumerate(funcs):
        seen, stack, found = {i}, [i], set()
        while stack:
            j = stack.pop()
            if funcs[j].evidence:
                found.add(j)
            for name in funcs[j].refs:
                for k in by_name.get(name, ()):
                    if k not in seen:
                        seen.add(k)
                        stack.append(k)
        out.append(found if f.device_side else set())
    return out


def _host_uses(
    units: Mapping[str, CudaUnit],
    constants: dict[str, WarpConstant],
    derived: dict[str, str],
    funcs: list[Function],
) -> None:
    """Lines where host code (or a macro we cannot place) reads a warp constant."""
    host_spans = {}
    for f in funcs:
        if f.kind in ("host", "host-device"):
            host_spans.setdefault(f.key, []).append(f.span)
    for key, unit in units.items():
        spans = host_spans.get(key, [])
        for node in unit.nodes("identifier"):
            name = text_of(node)
            root = name if name in constants else derived.get(name)
            if root is None:
                continue
            if any(a <= node.start_byte < b for a, b in spans):
                constants[root].host_uses.append(_line(unit, node))


def _decide_definitions(
    constants: dict[str, WarpConstant],
    funcs: list[Function],
    groups: _UnionFind,
    logical_roots: dict[int, list[str]],
) -> None:
    """A constant's definition becomes PORTAGPU_WARP_SIZE only when no host code
    and no logical32 function reads it; otherwise it stays 32 and native
    functions get PORTAGPU_WARP_SIZE at each use."""
    for const in constants.values():
        readers = {const.name} | const.derived
        logical_use = any(
            f.device_side and groups.find(i) in logical_roots and readers & set(f.evidence)
            for i, f in enumerate(funcs)
        )
        const.rewrite_definition = not const.host_uses and not logical_use
