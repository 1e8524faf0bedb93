"""CUDA sources embedded in Python: cupy.RawKernel/RawModule/ElementwiseKernel/
ReductionKernel, torch.utils.cpp_extension.load_inline(cuda_sources=...),
PyCUDA SourceModule: where they are and what text they hold, mapped back to
the Python file's own positions (lint checks them, hipify translates them).

A source may be a literal, a name bound to one earlier in the same scope, a
concatenation, `%`/`.format` of a literal with known or unknown values, or an
f-string; the parts that cannot be known are listed in `Mapped.unknown`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from portagpu.cuda.pystrings import Mapped, Pos, literal, placeholder
from portagpu.lines import split_lines

# callee name -> (positional index, keyword) of each CUDA-source argument, and
# whether that argument is a whole translation unit or a statement fragment.
SOURCE_ARGS: dict[str, tuple[tuple[int | None, str, bool], ...]] = {
    "RawKernel": ((0, "code", False),),
    "RawModule": ((None, "code", False),),
    "ElementwiseKernel": ((2, "operation", True), (None, "preamble", False)),
    "ReductionKernel": ((2, "map_expr", True), (3, "reduce_expr", True),
                        (4, "post_map_expr", True), (None, "preamble", False)),
    "load_inline": ((2, "cuda_sources", False),),
    "SourceModule": ((0, "source", False),),
    "compile_with_cache": ((0, "source", False),),
}
FRAGMENT_PREFIX = "__device__ void __portagpu_fragment__() {\n"
FRAGMENT_SUFFIX = "\n;}\n"
HIP_GUARD = re.compile(r"\bversion\.hip\b|\bis_hip\b|\bis_rocm\b|\bUSE_ROCM\b|\bhip_available\b")


@dataclass
class EmbeddedSource:
    call: ast.AST  # the kernel-building call (or, for a free string, the expression)
    callee: str  # "" for a string that reaches no known call
    argument: str  # which argument the source came from
    mapped: Mapped
    whole: bool  # full translation unit (False: ElementwiseKernel fragment)
    literal: ast.Constant | None = None  # the one str literal it comes from, if it does


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


class _Resolver:
    """Turns a source argument expression into Mapped text."""

    def __init__(self, lines: list[str], tree: ast.Module, parents: dict[ast.AST, ast.AST]):
        self.lines, self.tree, self.parents = lines, tree, parents
        self.constants = self._module_constants()
        self._assigned: dict[ast.AST, dict[str, list[ast.AST]]] = {}

    def _module_constants(self) -> dict[str, object]:
        consts = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name
            ) and isinstance(stmt.value, ast.Constant):
                consts[stmt.targets[0].id] = stmt.value.value
        return consts

    def at(self, node: ast.AST) -> Pos:
        line = getattr(node, "lineno", 1)
        raw = self.lines[line - 1].encode("utf-8") if line - 1 < len(self.lines) else b""
        col = len(raw[: getattr(node, "col_offset", 0)].decode("utf-8", "replace"))
        return line, col + 1

    def resolve(self, node: ast.AST, depth: int = 0) -> Mapped:
        if depth > 8:
            return placeholder(ast.unparse(node), self.at(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return literal(self.lines, node) or Mapped.synthetic(node.value, self.at(node))
        if isinstance(node, ast.JoinedStr):
            return literal(self.lines, node, self._fexpr) or placeholder(
                ast.unparse(node), self.at(node))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.resolve(node.left, depth + 1) + self.resolve(node.right, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return self._percent(self.resolve(node.left, depth + 1), node.right)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format"):
            return self._format(self.resolve(node.func.value, depth + 1), node)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "replace" and len(node.args) >= 2):
            return _replace(self.resolve(node.func.value, depth + 1), node.args[0], node.args[1])
        if isinstance(node, ast.Call) and _callee(node) == "Template" and len(node.args) == 1:
            return _template(self.resolve(node.args[0], depth + 1))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("substitute", "safe_substitute")):
            return self.resolve(node.func.value, depth + 1)
        if isinstance(node, ast.Name):
            bound = self._binding(node)
            if bound is not None:
                return self.resolve(bound, depth + 1)
        return placeholder(ast.unparse(node), self.at(node))

    def literal_node(self, node: ast.AST, depth: int = 0) -> ast.Constant | None:
        """The single str literal node is, directly or through a name binding."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node
        if isinstance(node, ast.Name) and depth < 8:
            bound = self._binding(node)
            return self.literal_node(bound, depth + 1) if bound is not None else None
        return None

    def _fexpr(self, expr: str, at: Pos) -> Mapped:
        value = self.constants.get(expr)
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return Mapped.synthetic(str(value), at)
        return placeholder(expr, at)

    def _value_text(self, node: ast.AST | None, at: Pos, what: str) -> Mapped:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, str)):
            return Mapped.synthetic(str(node.value), at)
        if isinstance(node, ast.Name) and isinstance(self.constants.get(node.id), (int, str)):
            return Mapped.synthetic(str(self.constants[node.id]), at)
        return placeholder(what, at)

    def _percent(self, fmt: Mapped, right: ast.AST) -> Mapped:
        values = list(right.elts) if isinstance(right, ast.Tuple) else [right]
        mapping = right if isinstance(right, ast.Dict) else None
        out, i, k = Mapped(), 0, 0
        spec = re.compile(r"%(\(([^)]*)\))?[-#0 +]*\d*(\.\d+)?[diouxXeEfFgGcrsa%]")
        for m in spec.finditer(fmt.text):
            out = out + Mapped(fmt.text[i:m.start()], fmt.pos[i:m.start()])
            at = fmt.pos[m.start()] or (1, 1)
            if m.group(0) == "%%":
                out = out + Mapped("%", [at])
            elif m.group(2) is not None and mapping is not None:
                value = next((v for key, v in zip(mapping.keys, mapping.values, strict=False)
                              if isinstance(key, ast.Constant) and key.value == m.group(2)), None)
                out = out + self._value_text(value, at, m.group(0))
            else:
                value = values[k] if k < len(values) and mapping is None else None
                k += 1
                out = out + self._value_text(value, at, m.group(0))
            i = m.end()
        out = out + Mapped(fmt.text[i:], fmt.pos[i:])
        out.unknown = fmt.unknown + out.unknown
        return out

    def _format(self, fmt: Mapped, call: ast.Call) -> Mapped:
        keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        out, i, auto = Mapped(), 0, 0
        for m in re.finditer(r"\{\{|\}\}|\{([^{}]*)\}", fmt.text):
            out = out + Mapped(fmt.text[i:m.start()], fmt.pos[i:m.start()])
            at = fmt.pos[m.start()] or (1, 1)
            if m.group(0) in ("{{", "}}"):
                out = out + Mapped(m.group(0)[0], [at])
            else:
                field = re.split(r"[!:.\[]", m.group(1), maxsplit=1)[0]
                if field == "":
                    field, auto = str(auto), auto + 1
                value = (call.args[int(field)] if field.isdigit() and int(field) < len(call.args)
                         else keywords.get(field))
                out = out + self._value_text(value, at, m.group(0))
            i = m.end()
        out = out + Mapped(fmt.text[i:], fmt.pos[i:])
        out.unknown = fmt.unknown + out.unknown
        return out

    def _binding(self, name: ast.Name) -> ast.AST | None:
        """The value last assigned to `name` before its use, in the same scope."""
        scope = self.parents.get(name)
        while scope is not None and not isinstance(
            scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module, ast.ClassDef)
        ):
            scope = self.parents.get(scope)
        candidates = []
        for scope_node in ([scope] if scope is not None else []) + (
            [self.tree] if scope is not self.tree else []
        ):
            assigned = self._assignments(scope_node).get(name.id, ())
            candidates = [node for node in assigned if node.lineno < name.lineno]
            if candidates:
                break
        if not candidates:
            return None
        return max(candidates, key=lambda n: (n.lineno, n.col_offset)).value

    def _assignments(self, scope: ast.AST) -> dict[str, list[ast.AST]]:
        """name -> the Assign / valued AnnAssign nodes binding it anywhere in
        scope, in walk order: one walk per scope, not one per name looked up."""
        found = self._assigned.get(scope)
        if found is None:
            found = self._assigned[scope] = {}
            for node in ast.walk(scope):
                if isinstance(node, ast.Assign):
                    for target in dict.fromkeys(t.id for t in node.targets if isinstance(t, ast.Name)):
                        found.setdefault(target, []).append(node)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                    found.setdefault(node.target.id, []).append(node)
        return found


def _replace(text: Mapped, old: ast.AST, new: ast.AST) -> Mapped:
    """`src.replace("NAME", "gen")` with literal arguments; anything else keeps src."""
    if not (isinstance(old, ast.Constant) and isinstance(old.value, str) and old.value
            and isinstance(new, ast.Constant) and isinstance(new.value, str)):
        return text
    out, i = Mapped(), 0
    for m in re.finditer(re.escape(old.value), text.text):
        out = out + Mapped(text.text[i:m.start()], text.pos[i:m.start()])
        out = out + Mapped.synthetic(new.value, text.pos[m.start()])
        i = m.end()
    out = out + Mapped(text.text[i:], text.pos[i:])
    out.unknown = text.unknown + out.unknown
    return out


def _template(text: Mapped) -> Mapped:
    """A string.Template: `$name` and `${name}` become placeholders, `$$` a `$`."""
    out, i = Mapped(), 0
    for m in re.finditer(r"\$(?:\$|\{(\w+)\}|(\w+))", text.text):
        out = out + Mapped(text.text[i:m.start()], text.pos[i:m.start()])
        at = text.pos[m.start()] or (1, 1)
        out = out + (Mapped("$", [at]) if m.group(0) == "$$" else placeholder(m.group(0), at))
        i = m.end()
    out = out + Mapped(text.text[i:], text.pos[i:])
    out.unknown = text.unknown + out.unknown
    return out


def _resolver(text: str, tree: ast.Module, shared: dict | None) -> _Resolver:
    """The module's resolver (its lines, parent map, bindings), made once per `shared`."""
    if shared is not None and shared.get("tree") is tree:
        return shared["resolver"]
    lines = split_lines(text, keepends=True)  # Python's line model, as ast counts
    resolver = _Resolver(lines, tree, _parents(tree))
    if shared is not None:
        shared.update(tree=tree, resolver=resolver)
    return resolver


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    """child -> parent, filled in ast.walk's order (breadth first), each
    node's children read once rather than twice."""
    parents = {}
    queue = [tree]
    for node in queue:  # the list grows as it is read: a queue
        for child in ast.iter_child_nodes(node):
            parents[child] = node
            queue.append(child)
    return parents


def hip_guarded(call: ast.AST, parents: dict[ast.AST, ast.AST], guard_names: Sequence[str]) -> bool:
    """Inside an `if` (or else) whose test names torch.version.hip, is_hip, ...?"""
    names = set(guard_names)
    node = call
    while node in parents:
        parent = parents[node]
        if isinstance(parent, (ast.If, ast.IfExp)):
            test = ast.unparse(parent.test)
            if HIP_GUARD.search(test) or any(re.search(rf"\b{re.escape(n)}\b", test)
                                             for n in names):
                return True
        node = parent
    return False


def find_sources(text: str, tree: ast.Module, guard_names: Sequence[str] = (),
                 shared: dict | None = None) -> Iterator[EmbeddedSource]:
    """Every CUDA source argument of a kernel-building call, resolved as far as
    possible. `shared`: a dict also given to find_free_sources for the same
    module, so that both use one parent map and resolver."""
    if not any(name in text for name in SOURCE_ARGS):
        return
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _callee(node) in SOURCE_ARGS]
    if not calls:
        return  # the names were words in text, not calls: no parent map to build
    resolver = _resolver(text, tree, shared)
    parents = resolver.parents
    for call in calls:
        callee = _callee(call)
        spec = SOURCE_ARGS[callee]
        if hip_guarded(call, parents, guard_names):
            continue
        keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        for index, keyword, fragment in spec:
            arg = keywords.get(keyword)
            if arg is None and index is not None and index < len(call.args):
                arg = call.args[index]
            if arg is None or (isinstance(arg, ast.Constant) and arg.value is None):
                continue
            items = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
            for item in items:
                mapped = resolver.resolve(item)
                if fragment:
                    mapped = (Mapped.synthetic(FRAGMENT_PREFIX) + mapped
                              + Mapped.synthetic(FRAGMENT_SUFFIX))
                yield EmbeddedSource(call, callee, keyword, mapped, not fragment,
                                     resolver.literal_node(item))


# A str literal holding one of these, with code punctuation, is CUDA C source
# even where it reaches no kernel-building call directly (a module constant
# handed to a wrapper class, a code generator's template, a prompt library).
CUDA_CODE_MARKERS = ("__global__", "__device__", "threadIdx", "__shfl", "__syncthreads", "__ballot")
_TEMPLATE_METHODS = frozenset({"format", "replace", "substitute", "safe_substitute"})


def _plainly_cuda_literals(tree: ast.Module) -> Iterator[ast.AST]:
    """String literals and f-strings (not their parts) holding plain CUDA."""
    parts: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts.update(id(v) for v in node.values)
            value = "".join(
                v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            value = node.value
        else:
            continue
        if plainly_cuda(value):
            yield node


def plainly_cuda(value: str) -> bool:
    if "__global__" in value or "__device__" in value:
        return "(" in value
    return ";" in value and any(marker in value for marker in CUDA_CODE_MARKERS)


def _docstrings(tree: ast.Module) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _template_expression(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    """The expression that turns a literal into source: `+` chains, `%`,
    `.format(...)`, `.replace(...)`, `string.Template(...)`, `.substitute(...)`."""
    while True:
        parent = parents.get(node)
        if isinstance(parent, ast.BinOp) and (
            isinstance(parent.op, ast.Add) or (isinstance(parent.op, ast.Mod) and parent.left is node)
        ):
            node = parent
        elif isinstance(parent, ast.Attribute) and parent.attr in _TEMPLATE_METHODS and isinstance(
            parents.get(parent), ast.Call
        ):
            node = parents[parent]
        elif isinstance(parent, ast.Call) and _callee(parent) == "Template" and node in parent.args:
            node = parent
        else:
            return node


def _template_uses(tree: ast.Module, parents: dict[ast.AST, ast.AST]) -> dict[str, ast.AST]:
    """name -> the first template expression built from it (`SRC.format(...)`)."""
    uses: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in uses:
            expr = _template_expression(node, parents)
            if expr is not node:
                uses[node.id] = expr
    return uses


def find_free_sources(text: str, tree: ast.Module, guard_names: Sequence[str] = (),
                      shared: dict | None = None) -> Iterator[EmbeddedSource]:
    """String literals that are plainly CUDA source, wherever they are, with the
    template that fills them in resolved as far as possible."""
    if not any(marker in text for marker in CUDA_CODE_MARKERS):
        return
    found = list(_plainly_cuda_literals(tree))
    if not found:
        return  # the markers sat in comments or prose: no parent map to build
    resolver = _resolver(text, tree, shared)
    parents = resolver.parents
    docstrings = _docstrings(tree)
    uses: dict[str, ast.AST] | None = None
    for node in found:
        if id(node) in docstrings or hip_guarded(node, parents, guard_names):
            continue
        expr = _template_expression(node, parents)
        target = parents.get(expr)
        if isinstance(target, ast.Assign) and len(target.targets) == 1 and isinstance(target.targets[0], ast.Name):
            uses = _template_uses(tree, parents) if uses is None else uses
            expr = uses.get(target.targets[0].id, expr)
        yield EmbeddedSource(expr, "", "string", resolver.resolve(expr), True, node if isinstance(node, ast.Constant) else None)
