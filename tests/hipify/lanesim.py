"""An executable model of a GPU block for the warp-model tests: runs a small
CUDA/HIP kernel (the subset the tests' own kernels use) with numpy, every
thread of a block in lockstep, on wavefronts of `wave` lanes.

Warp intrinsics follow the hardware: a shuffle reads within `width`-lane
segments of the wavefront (the lane's own value when the source is outside
its segment, as CUDA and HIP do), a ballot has one bit per lane of the
wavefront, so on a wave64 it is 64 bits. portagpu's logical32 helpers
(portagpu_ballot32, ...) are modelled from their definition in
portagpu_hip_compat.h: this lane's 32-lane half of the wavefront.

Only what the test kernels use is implemented; anything else raises, so a
test cannot pass by skipping code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from portagpu.cuda.parser import parse, text_of

COMPAT_END = "// end of portagpu_hip_compat.h"
UNSIGNED = {
    "unsigned": 0xFFFFFFFF,
    "unsigned int": 0xFFFFFFFF,
    "uint32_t": 0xFFFFFFFF,
    "unsigned long long": 0xFFFFFFFFFFFFFFFF,
    "uint64_t": 0xFFFFFFFFFFFFFFFF,
}
FLOATS = {"float", "double"}


def strip_compat_header(text: str) -> str:
    return text.split(COMPAT_END, 1)[-1]


@dataclass
class Ref:
    array: np.ndarray
    index: np.ndarray  # per lane


class _Return(Exception):
    pass


@dataclass
class Frame:
    env: dict[str, Any] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    returned: np.ndarray | None = None
    result: np.ndarray | None = None


class LaneSim:
    def __init__(self, source: str, *, wave: int, macros: dict[str, Any] | None = None) -> None:
        self.wave = wave
        self.source = strip_compat_header(source)
        self.tree = parse(self.source)
        self.functions: dict[str, Any] = {}
        self.macros: dict[str, Any] = dict(macros or {})
        for node in _walk(self.tree.root_node):
            if node.type == "function_definition":
                name = _function_name(node)
                if name:
                    self.functions[name] = node
            elif node.type == "preproc_def":
                value = node.child_by_field_name("value")
                name = text_of(node.child_by_field_name("name"))
                if value is not None and name not in self.macros:
                    self.macros[name] = _parse_expression(text_of(value))

    # --- running -----------------------------------------------------------------------
    def launch(self, kernel: str, grid: int, block: int, **args: Any) -> None:
        node = self.functions[kernel]
        params = _parameters(node)
        for b in range(grid):
            self.block_idx, self.block_dim, self.grid_dim = b, block, grid
            self.lanes = np.arange(block)
            self.shared: dict[str, np.ndarray] = {}
            frame = Frame()
            for name, _type in params:
                value = args[name]
                frame.env[name] = value if isinstance(value, np.ndarray) else self._full(value)
                frame.types[name] = _type
            mask = np.ones(block, dtype=bool)
            self._body(node.child_by_field_name("body"), frame, mask)

    def _full(self, value: Any) -> np.ndarray:
        out = np.empty(self.block_dim, dtype=object)
        out[:] = [value] * self.block_dim
        return out

    def _body(self, node: Any, frame: Frame, mask: np.ndarray) -> None:
        for stmt in node.named_children:
            live = mask if frame.returned is None else mask & ~frame.returned
            if not live.any():
                return
            self._stmt(stmt, frame, live)

    def _stmt(self, node: Any, frame: Frame, mask: np.ndarray) -> None:
        kind = node.type
        if kind == "compound_statement":
            self._body(node, frame, mask)
        elif kind == "comment":
            return
        elif kind == "declaration":
            self._declaration(node, frame, mask)
        elif kind == "expression_statement":
            if node.named_children:
                self._eval(node.named_children[0], frame, mask)
        elif kind == "if_statement":
            cond = self._truth(
                self._eval(_unparen(node.child_by_field_name("condition")), frame, mask)
            )
            self._stmt(node.child_by_field_name("consequence"), frame, mask & cond)
            alt = node.child_by_field_name("alternative")
            if alt is not None:
                self._stmt(
                    alt.named_children[-1] if alt.type == "else_clause" else alt,
                    frame,
                    mask & ~cond,
                )
        elif kind == "for_statement":
            init = node.child_by_field_name("initializer")
            if init is not None:
                self._stmt(init, frame, mask) if init.type == "declaration" else self._eval(
                    init, frame, mask
                )
            live = mask.copy()
            for _ in range(100000):
                cond_node = node.child_by_field_name("condition")
                if cond_node is not None:
                    live &= self._truth(self._eval(cond_node, frame, live))
                if frame.returned is not None:
                    live &= ~frame.returned
                if not live.any():
                    break
                self._stmt(node.child_by_field_name("body"), frame, live)
                update = node.child_by_field_name("update")
                if update is not None:
                    self._eval(update, frame, live)
        elif kind == "return_statement":
            value = node.named_children[0] if node.named_children else None
            if value is not None:
                result = self._eval(value, frame, mask)
                frame.result = (
                    result if frame.result is None else np.where(mask, result, frame.result)
                )
            frame.returned = mask.copy() if frame.returned is None else frame.returned | mask
        else:
            raise NotImplementedError(f"statement {kind}: {text_of(node)[:60]}")

    def _declaration(self, node: Any, frame: Frame, mask: np.ndarray) -> None:
        words = [
            text_of(c)
            for c in node.children
            if c.type in ("primitive_type", "sized_type_specifier", "type_identifier")
        ]
        type_name = " ".join(" ".join(words).split())
        shared = any(text_of(c) == "__shared__" for c in node.children)
        for decl in node.children_by_field_name("declarator"):
            if decl.type == "array_declarator":
                name = text_of(decl.child_by_field_name("declarator"))
                size = int(self._scalar(decl.child_by_field_name("size"), frame))
                if not shared:
                    raise NotImplementedError("local arrays")
                self.shared[name] = np.zeros(size, dtype=float if type_name in FLOATS else object)
                frame.env[name] = self.shared[name]
                continue
            value_node = (
                decl.child_by_field_name("value") if decl.type == "init_declarator" else None
            )
            name = text_of(
                decl.child_by_field_name("declarator") if value_node is not None else decl
            )
            value = self._eval(value_node, frame, mask) if value_node is not None else self._full(0)
            frame.types[name] = type_name
            old = frame.env.get(name)
            new = self._convert(value, type_name)
            frame.env[name] = (
                new if old is None or not isinstance(old, np.ndarray) else np.where(mask, new, old)
            )

    def _convert(self, value: np.ndarray, type_name: str) -> np.ndarray:
        if type_name in FLOATS:
            return np.asarray(value, dtype=float)
        if type_name in UNSIGNED:
            return np.array([int(v) & UNSIGNED[type_name] for v in value], dtype=object)
        if type_name in ("int", "long", "long long", "int32_t", "int64_t", "bool", "auto", ""):
            if np.asarray(value).dtype == float:
                return np.array([int(math.trunc(v)) for v in value], dtype=object)
        return value

    # --- expressions -----------------------------------------------------------------------
    def _scalar(self, node: Any, frame: Frame) -> Any:
        value = self._eval(node, frame, np.ones(self.block_dim, dtype=bool))
        return value[0] if isinstance(value, np.ndarray) else value

    def _truth(self, value: np.ndarray) -> np.ndarray:
        return np.array([bool(v) for v in value], dtype=bool)

    def _eval(self, node: Any, frame: Frame, mask: np.ndarray) -> Any:
        kind = node.type
        if kind == "number_literal":
            return self._full(_number(text_of(node)))
        if kind in ("true", "false"):
            return self._full(kind == "true")
        if kind == "parenthesized_expression":
            return self._eval(node.named_children[0], frame, mask)
        if kind == "identifier":
            name = text_of(node)
            if name in frame.env:
                return frame.env[name]
            if name in self.macros:
                macro = self.macros[name]
                return (
                    self._eval(macro, frame, mask)
                    if not isinstance(macro, (int, float))
                    else self._full(macro)
                )
            if name == "warpSize":
                return self._full(self.wave)
            if name in ("INFINITY",):
                return self._full(math.inf)
            raise NotImplementedError(f"identifier {name}")
        if kind == "field_expression":
            obj = text_of(node.child_by_field_name("argument"))
            fld = text_of(node.child_by_field_name("field"))
            if fld != "x":
                return self._full(0 if obj in ("threadIdx", "blockIdx") else 1)
            return {
                "threadIdx": np.array(list(self.lanes), dtype=object),
                "blockIdx": self._full(self.block_idx),
                "blockDim": self._full(self.block_dim),
                "gridDim": self._full(self.grid_dim),
            }[obj]
        if kind == "binary_expression":
            return self._binary(node, frame, mask)
        if kind == "unary_expression":
            op = text_of(node.child_by_field_name("operator"))
            value = self._eval(node.child_by_field_name("argument"), frame, mask)
            if op == "-":
                return -value
            if op == "!":
                return self._full(0) + np.array([not v for v in value], dtype=object)
            if op == "~":
                return np.array([~int(v) for v in value], dtype=object)
            raise NotImplementedError(op)
        if kind == "conditional_expression":
            cond = self._truth(self._eval(node.child_by_field_name("condition"), frame, mask))
            a = self._eval(node.child_by_field_name("consequence"), frame, mask & cond)
            b = self._eval(node.child_by_field_name("alternative"), frame, mask & ~cond)
            return np.where(cond, a, b)
        if kind == "cast_expression":
            type_name = " ".join(text_of(node.child_by_field_name("type")).split())
            return self._convert(
                self._eval(node.child_by_field_name("value"), frame, mask), type_name
            )
        if kind == "subscript_expression":
            array, index = self._ref(node, frame, mask)
            return np.array(
                [array[int(i)] if m else 0 for i, m in zip(index, mask, strict=True)],
                dtype=array.dtype,
            )
        if kind == "assignment_expression":
            return self._assign(node, frame, mask)
        if kind == "update_expression":
            target = node.child_by_field_name("argument")
            op = "+" if "++" in text_of(node) else "-"
            return self._store(
                target, self._eval(target, frame, mask) + (1 if op == "+" else -1), frame, mask
            )
        if kind == "call_expression":
            return self._call(node, frame, mask)
        if kind == "pointer_expression":
            return Ref(*self._ref(node.child_by_field_name("argument"), frame, mask))
        raise NotImplementedError(f"expression {kind}: {text_of(node)[:60]}")

    def _binary(self, node: Any, frame: Frame, mask: np.ndarray) -> Any:
        op = text_of(node.child_by_field_name("operator"))
        a = self._eval(node.child_by_field_name("left"), frame, mask)
        if op in ("&&", "||"):
            ta = self._truth(a)
            b = self._truth(
                self._eval(
                    node.child_by_field_name("right"), frame, mask & (ta if op == "&&" else ~ta)
                )
            )
            return self._full(0) + ((ta & b) if op == "&&" else (ta | b))
        b = self._eval(node.child_by_field_name("right"), frame, mask)
        return _apply(op, a, b)

    def _ref(self, node: Any, frame: Frame, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if node.type != "subscript_expression":
            raise NotImplementedError(f"reference to {text_of(node)[:40]}")
        array = self._eval(node.child_by_field_name("argument"), frame, mask)
        indices = node.child_by_field_name("indices")
        index = self._eval(indices.named_children[0], frame, mask)
        return array, index

    def _assign(self, node: Any, frame: Frame, mask: np.ndarray) -> Any:
        op = text_of(node.child_by_field_name("operator"))
        left = node.child_by_field_name("left")
        value = self._eval(node.child_by_field_name("right"), frame, mask)
        if op != "=":
            value = _apply(op[:-1], self._eval(left, frame, mask), value)
        return self._store(left, value, frame, mask)

    def _store(self, left: Any, value: Any, frame: Frame, mask: np.ndarray) -> Any:
        if left.type == "identifier":
            name = text_of(left)
            value = self._convert(value, frame.types.get(name, ""))
            frame.env[name] = np.where(mask, value, frame.env[name])
            return frame.env[name]
        array, index = self._ref(left, frame, mask)
        for lane in np.flatnonzero(mask):
            array[int(index[lane])] = value[lane]
        return value

    # --- calls ------------------------------------------------------------------------------
    def _call(self, node: Any, frame: Frame, mask: np.ndarray) -> Any:
        function = node.child_by_field_name("function")
        name = text_of(function)
        args = [
            self._eval(a, frame, mask) for a in node.child_by_field_name("arguments").named_children
        ]
        builtin = (
            getattr(self, "_b_" + name.lstrip("_"), None)
            if name.startswith(("__", "portagpu_"))
            or name in ("min", "max", "atomicAdd", "fmaxf", "expf")
            else None
        )
        if builtin is not None:
            return builtin(mask, *args)
        if name in ("min", "max", "fmaxf"):
            fn = {"min": np.minimum, "max": np.maximum, "fmaxf": np.maximum}[name]
            return fn(args[0], args[1])
        if name == "atomicAdd":
            ref, value = args
            old = self._full(0)
            for lane in np.flatnonzero(mask):
                i = int(ref.index[lane])
                old[lane] = ref.array[i]
                ref.array[i] = ref.array[i] + value[lane]
            return old
        target = self.functions.get(name)
        if target is None:
            raise NotImplementedError(f"call {name}")
        callee = Frame()
        for (pname, ptype), value in zip(_parameters(target), args, strict=True):
            callee.env[pname] = self._convert(value, ptype)
            callee.types[pname] = ptype
        self._body(target.child_by_field_name("body"), callee, mask)
        return callee.result if callee.result is not None else self._full(0)

    # warp intrinsics: `self` is the lane's index in its wavefront
    def _wave_lane(self) -> np.ndarray:
        return self.lanes % self.wave

    def _wave_base(self) -> np.ndarray:
        return self.lanes - self._wave_lane()

    def _read(self, value: np.ndarray, source_lane_in_wave: np.ndarray) -> np.ndarray:
        return value[np.minimum(self._wave_base() + source_lane_in_wave, self.block_dim - 1)]

    def _width(self, rest: tuple) -> int:
        return int(rest[0][0]) if rest else self.wave

    def _b_shfl_down_sync(self, mask, _m, value, delta, *rest):
        width, me = self._width(rest), self._wave_lane()
        src = np.array(
            [
                s + int(d) if (s % width) + int(d) < width else s
                for s, d in zip(me, delta, strict=True)
            ]
        )
        return self._read(value, src)

    def _b_shfl_up_sync(self, mask, _m, value, delta, *rest):
        width, me = self._width(rest), self._wave_lane()
        src = np.array(
            [s - int(d) if (s % width) - int(d) >= 0 else s for s, d in zip(me, delta, strict=True)]
        )
        return self._read(value, src)

    def _b_shfl_xor_sync(self, mask, _m, value, lane_mask, *rest):
        width, me = self._width(rest), self._wave_lane()
        src = np.array(
            [
                s ^ int(x) if (s ^ int(x)) // width == s // width else s
                for s, x in zip(me, lane_mask, strict=True)
            ]
        )
        return self._read(value, src)

    def _b_shfl_sync(self, mask, _m, value, source, *rest):
        width, me = self._width(rest), self._wave_lane()
        src = np.array(
            [(s // width) * width + int(x) % width for s, x in zip(me, source, strict=True)]
        )
        return self._read(value, src)

    def _ballot(self, mask: np.ndarray, pred: np.ndarray) -> np.ndarray:
        """The hardware ballot: one bit per lane of the wavefront (64 on a wave64)."""
        bits = self._full(0)
        truth = self._truth(pred) & mask
        for base in range(0, self.block_dim, self.wave):
            word = sum(
                1 << (lane - base)
                for lane in range(base, min(base + self.wave, self.block_dim))
                if truth[lane]
            )
            bits[base : base + self.wave] = word
        return bits

    def _b_ballot_sync(self, mask, m, pred):
        return np.array(
            [b & int(x) for b, x in zip(self._ballot(mask, pred), m, strict=True)], dtype=object
        )

    def _b_activemask(self, mask):
        return self._ballot(mask, self._full(1))

    def _b_any_sync(self, mask, m, pred):
        return np.array([int(b != 0) for b in self._b_ballot_sync(mask, m, pred)], dtype=object)

    def _b_all_sync(self, mask, m, pred):
        active = self._b_activemask(mask)
        votes = self._b_ballot_sync(mask, m, pred)
        return np.array(
            [
                int((v & a & int(x)) == (a & int(x)))
                for v, a, x in zip(votes, active, m, strict=True)
            ],
            dtype=object,
        )

    def _half_base(self) -> np.ndarray:
        return (self._wave_lane() & 32) if self.wave == 64 else np.zeros(self.block_dim, int)

    def _b_portagpu_half_mask(self, mask, m):
        return np.array(
            [(int(x) & 0xFFFFFFFF) << int(h) for x, h in zip(m, self._half_base(), strict=True)],
            dtype=object,
        )

    def _b_portagpu_ballot32(self, mask, m, pred):
        return np.array(
            [
                ((b >> int(h)) & 0xFFFFFFFF) & int(x)
                for b, h, x in zip(self._ballot(mask, pred), self._half_base(), m, strict=True)
            ],
            dtype=object,
        )

    def _b_portagpu_activemask32(self, mask):
        return self._b_portagpu_ballot32(mask, self._full(0xFFFFFFFF), self._full(1))

    def _b_portagpu_any32(self, mask, m, pred):
        return np.array(
            [int(v != 0) for v in self._b_portagpu_ballot32(mask, m, pred)], dtype=object
        )

    def _b_portagpu_all32(self, mask, m, pred):
        live = self._b_portagpu_activemask32(mask)
        votes = self._b_portagpu_ballot32(mask, m, pred)
        return np.array(
            [
                int((v & lv & int(x)) == (lv & int(x)))
                for v, lv, x in zip(votes, live, m, strict=True)
            ],
            dtype=object,
        )

    def _b_popc(self, mask, x):
        return np.array([bin(int(v) & 0xFFFFFFFF).count("1") for v in x], dtype=object)

    def _b_popcll(self, mask, x):
        return np.array([bin(int(v) & 0xFFFFFFFFFFFFFFFF).count("1") for v in x], dtype=object)

    def _b_ffs(self, mask, x):
        return np.array(
            [((int(v) & 0xFFFFFFFF) & -(int(v) & 0xFFFFFFFF)).bit_length() for v in x], dtype=object
        )

    def _b_ffsll(self, mask, x):
        return np.array([(int(v) & -int(v)).bit_length() for v in x], dtype=object)

    def _b_syncthreads(self, mask):
        return self._full(0)

    def _b_syncwarp(self, mask, *args):
        return self._full(0)


def _apply(op: str, a: Any, b: Any) -> Any:
    if op in ("/", "%") and _integral(a) and _integral(b):
        if op == "/":
            return np.array(
                [int(x / y) if y else 0 for x, y in zip(a, b, strict=True)], dtype=object
            )
        return np.array(
            [int(math.fmod(x, y)) if y else 0 for x, y in zip(a, b, strict=True)], dtype=object
        )
    table = {
        "+": lambda x, y: x + y,
        "-": lambda x, y: x - y,
        "*": lambda x, y: x * y,
        "/": lambda x, y: x / y,
        "&": lambda x, y: x & y,
        "|": lambda x, y: x | y,
        "^": lambda x, y: x ^ y,
        "<<": lambda x, y: x << y,
        ">>": lambda x, y: x >> y,
        "==": lambda x, y: x == y,
        "!=": lambda x, y: x != y,
        "<": lambda x, y: x < y,
        ">": lambda x, y: x > y,
        "<=": lambda x, y: x <= y,
        ">=": lambda x, y: x >= y,
    }
    if op not in table:
        raise NotImplementedError(op)
    if op in ("&", "|", "^", "<<", ">>"):
        return np.array(
            [table[op](int(x), int(y)) for x, y in zip(a, b, strict=True)], dtype=object
        )
    result = table[op](a, b)
    if op in ("==", "!=", "<", ">", "<=", ">="):
        return np.array([int(bool(v)) for v in result], dtype=object)
    return result


def _integral(value: Any) -> bool:
    return np.asarray(value).dtype != float and all(
        isinstance(v, (int, np.integer, bool)) for v in value
    )


def _number(text: str) -> Any:
    if text.lower().startswith("0x"):
        return int(text.rstrip("uUlL"), 16)
    clean = text.rstrip("uUlLfF")
    if any(c in clean for c in ".eE") or text[-1] in "fF":
        return float(clean)
    return int(clean, 10)


def _unparen(node: Any) -> Any:
    while node is not None and node.type in ("parenthesized_expression", "condition_clause"):
        node = node.named_children[0]
    return node


def _walk(node: Any):
    yield node
    for child in node.children:
        yield from _walk(child)


def _function_name(node: Any) -> str:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "identifier":
        declarator = declarator.child_by_field_name("declarator")
    return text_of(declarator) if declarator is not None else ""


def _parameters(node: Any) -> list[tuple[str, str]]:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    out = []
    for param in declarator.child_by_field_name("parameters").named_children:
        words = [
            text_of(c)
            for c in param.children
            if c.type in ("primitive_type", "sized_type_specifier", "type_identifier")
        ]
        inner = param.child_by_field_name("declarator")
        while inner is not None and inner.type != "identifier":
            inner = inner.child_by_field_name("declarator")
        out.append((text_of(inner), " ".join(" ".join(words).split())))
    return out


def _parse_expression(text: str) -> Any:
    tree = parse(f"auto __pg = ({text.strip()});")
    for node in _walk(tree.root_node):
        if node.type == "init_declarator":
            return node.child_by_field_name("value")
    raise NotImplementedError(text)
