"""The single pruned walk over a module and the context checkers report through.

Speed: the walk only descends into nodes whose line range holds a candidate
line (a line with one of the enabled rules' tokens, or a local alias of a
module those tokens name); everything else is skipped without being visited.
One walk serves every enabled rule: nodes are dispatched by type.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from portagpu.lint import tokenlines, vendor_names, vendor_paths
from portagpu.lint.model import Edit, Finding, Fix, LintSettings, Rule
from portagpu.lint.python import guards, project_flags
from portagpu.lint.python.imports import ImportMap
from portagpu.lint.python.registry import CheckerFn
from portagpu.lint.python.source import Source

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TOP_DEFINITION = re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)
_TRY_STAR = getattr(ast, "TryStar", ast.Try)
_MATCH = getattr(ast, "Match", None)
_DEFINITIONS = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
_FALLBACK_ERRORS = frozenset(("ImportError", "ModuleNotFoundError", "AttributeError"))
_ASSIGNED = re.compile(r"\s*(\w+)\s*(?::[^=]*)?=(?!=)")


class _Fields(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _same_target(target: ast.AST, name: ast.Name | ast.Attribute) -> bool:
    """`target` assigns what `name` reads: the same plain name, or the same
    attribute of the same plain name (`args.backend`)."""
    if isinstance(name, ast.Name):
        return isinstance(target, ast.Name) and target.id == name.id
    return (
        isinstance(target, ast.Attribute)
        and target.attr == name.attr
        and isinstance(target.value, ast.Name)
        and isinstance(name.value, ast.Name)
        and target.value.id == name.value.id
    )


_UNSET = object()


class Context:
    def __init__(
        self,
        path: str,
        source: Source,
        tree: ast.Module,
        imports: ImportMap,
        settings: LintSettings,
        dispatch: dict[type, list[tuple[Rule, CheckerFn]]],
        lines: Sequence[int],
    ) -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self.imports = imports
        self.settings = settings
        self.guard_names = tuple(settings.guard_names)
        self._dispatch = dispatch
        self._lines = lines
        self._nlines = len(lines)
        self.cover: frozenset[str] = vendor_paths.path_cover(path)
        self.stack: list[ast.AST] = []
        self.test_depth = 0  # > 0 while inside an if/while/assert/ternary test
        self._catching: list[frozenset[str]] = []  # exceptions caught around us
        self.old_path = 0  # > 0 inside the old-version branch of a version check
        self.memo: dict[str, Any] = {}  # per-file caches of checkers
        self.findings: list[Finding] = []
        self._seen: set[tuple[int, int, str]] = set()
        self._bindings = None  # bindings.Bindings, built on first need
        self._qualified: dict[int, str | None] = {}  # id(node) -> qualify(node); the tree outlives this

    # -- queries for checkers -------------------------------------------------
    def qualify(self, node: ast.AST) -> str | None:
        # several rules ask of the same node; the import map is fixed before the walk
        key = id(node)
        qual = self._qualified.get(key, _UNSET)
        if qual is _UNSET:
            qual = self._qualified[key] = self.imports.qualify(node)
        return qual

    @property
    def in_test(self) -> bool:
        return self.test_depth > 0

    def checked_earlier_in_test(self) -> bool:
        """Whether an operand before the current node in an enclosing `and`/`or`
        of a test is a device check (`torch.cuda.is_available() and <node>`)."""
        for index in range(len(self.stack) - 2, -1, -1):
            outer, inner = self.stack[index], self.stack[index + 1]
            if isinstance(outer, (ast.stmt, ast.IfExp)):
                return False
            if isinstance(outer, ast.BoolOp):
                earlier = outer.values[: outer.values.index(inner)]
                if any(self._cover_of(value) for value in earlier):
                    return True
        return False

    def catches(self, *names: str) -> bool:
        """Whether an enclosing `try:` body catches one of `names` (or Exception)."""
        wanted = {*names, "Exception", "BaseException"}
        return any(caught & wanted for caught in self._catching)

    def parent(self, depth: int = 1) -> ast.AST | None:
        """The ancestor `depth` levels up from the node being checked."""
        index = len(self.stack) - 1 - depth
        return self.stack[index] if index >= 0 else None

    @property
    def module_text(self) -> str:
        """The module's whole text: facts about the module must not depend on
        what narrowing blanked (the tree and `source` hold the narrowed text)."""
        return tokenlines.original_text(self.source.text)

    def text_mentions(self, *words: str) -> bool:
        """Whether the module names any of `words` as a word of its own
        ("mps" in `torch.backends.mps`, `has_mps`; not in "timestamps")."""
        text = self.module_text
        return any(w in text and _word_pattern(w).search(text) for w in words)

    def bound_in_scope(self, names: Sequence[str], node: ast.AST) -> str | None:
        """First of `names` definitely bound where `node` (the node being
        checked) runs: a safe fix may use it without risking a NameError."""
        if self._bindings is None:
            from portagpu.lint.python.bindings import Bindings

            self._bindings = Bindings(self.tree, del_lines=self.source.candidate_lines((), ("del",)))
        path = self.stack if self.stack and self.stack[-1] is node else [*self.stack, node]
        return next((n for n in names if self._bindings.definitely_bound(n, path)), None)

    def assigned_value(self, name: ast.Name | ast.Attribute) -> ast.expr | None:
        """The value last assigned to `name` (plain `name = ...`, or `obj.attr =
        ...` for an attribute of a plain name) before its use, in the enclosing
        function's top-level statements or else at module level."""
        scopes = [s for s in reversed(self.stack) if isinstance(s, _FUNCTIONS)][:1]
        for scope in (*scopes, self.tree):
            found = None
            for stmt in scope.body:
                if stmt.lineno >= name.lineno:
                    break
                if isinstance(stmt, ast.Assign) and any(_same_target(t, name) for t in stmt.targets):
                    found = stmt.value
            if found is not None:
                return found
        return None

    def assigned_values(self, name: ast.Name) -> list[ast.expr]:
        """Every value assigned to `name` anywhere in its function (branches
        included), else at module level: what a variable may hold."""
        scopes = [s for s in reversed(self.stack) if isinstance(s, _FUNCTIONS)][:1]
        for scope in (*scopes, self.tree):
            nodes = ast.walk(scope) if scope is not self.tree else iter(scope.body)
            found = [
                node.value
                for node in nodes
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name.id for t in node.targets)
            ]
            if found:
                return found
        return []

    # -- reporting ------------------------------------------------------------
    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        """1-based line and character column of node's start and (exclusive) end."""
        src = self.source
        line, end_line = node.lineno, node.end_lineno or node.lineno
        col = src.char_col(line, node.col_offset) + 1
        end = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return line, col, end_line, src.char_col(end_line, end) + 1

    def text_of(self, node: ast.AST) -> str:
        """Source text of a node (character-accurate on non-ASCII lines)."""
        line, col, end_line, end_col = self.span(node)
        return self.source.segment(line, col - 1, end_line, end_col - 1)

    def edit(
        self, start: ast.AST, end: ast.AST | None, content: str, *, from_end: bool = False
    ) -> Edit:
        """Edit replacing [start, end) (node spans); from_end starts at start's end."""
        line, col, end_line, end_col = self.span(start)
        if from_end:
            line, col = end_line, end_col
        if end is not None:
            _, _, end_line, end_col = self.span(end)
        return Edit(line, col, end_line, end_col, content)

    def _chain_anchor(self, node: ast.AST) -> tuple[int, int] | None:
        """On a chain spanning lines (`model = (Net()\\n    .cuda())`), the
        line and column of the offending attribute, not of the chain's start."""
        attr = node.func if isinstance(node, ast.Call) else node
        if not isinstance(attr, ast.Attribute) or attr.end_lineno in (None, node.lineno):
            return None
        line = attr.end_lineno
        text = self.source.line(line)
        end = self.source.char_col(line, attr.end_col_offset or 0)
        start = text.rfind(attr.attr, 0, end)
        return (line, start + 1) if start >= 0 else None

    def guarded(self, rule: Rule) -> bool:
        if not self.cover:
            return False
        wanted = [t for t in rule.targets if t in self.settings.targets] or list(rule.targets)
        return all(t in self.cover for t in wanted)

    def report(
        self,
        rule: Rule,
        node: ast.AST,
        fix: Fix | None = None,
        *,
        respect_guards: bool | None = None,
        **fields: Any,
    ) -> None:
        if self.old_path:
            return  # version-gated: the old-version path is neither reported nor rewritten
        if respect_guards is None:
            respect_guards = rule.options.get("respect_guards", True)
        if respect_guards and self.guarded(rule):
            return
        line, col, end_line, end_col = self.span(node)
        line, col = self._chain_anchor(node) or (line, col)
        key = (line, col, rule.id)
        if key in self._seen:
            return
        self._seen.add(key)
        message = rule.message.format_map(_Fields(fields)) if fields else rule.message
        self.findings.append(
            Finding(self.path, line, col, end_line, end_col, rule.id, message, rule.severity, fix)
        )

    # -- the walk -------------------------------------------------------------
    def _hit(self, lo: int, hi: int) -> bool:
        i = bisect_left(self._lines, lo)
        return i < self._nlines and self._lines[i] <= hi

    def run(self) -> list[Finding]:
        self._block(self.tree.body)
        return self.findings

    def _visit(self, node: ast.AST) -> None:
        self.stack.append(node)
        handlers = self._dispatch.get(node.__class__)
        if handlers:
            for rule, fn in handlers:
                fn(node, self, rule)
        cls = node.__class__
        if (cls is ast.If or cls is ast.While or cls is ast.IfExp) and node.test.__class__ is ast.Constant:
            # `if False:` / `if 0:` never runs its body (`while True:` its else): dead code breaks nothing
            self._test(node.test)
            visit = self._child if cls is ast.IfExp else self._block
            visit(node.body if node.test.value else node.orelse)
        elif (cls is ast.If or cls is ast.IfExp) and guards.other_vendor_test(node.test, self.qualify):
            # `if device.type == "xpu":` runs only on Intel: its body breaks no target
            self._test(node.test)
            visit = self._child if cls is ast.IfExp else self._block
            saved = self.cover
            self.cover = guards.EVERY
            visit(node.body)
            self.cover = saved
            visit(node.orelse)
        elif cls is ast.If or cls is ast.While or cls is ast.IfExp:
            cover = self._cover_of(node.test)
            old = guards.version_gate(node.test)
            self._test(node.test)
            saved = self.cover
            self.cover = saved | cover
            # `if x.device != "cuda": x = x.to("cuda")`: the body runs exactly off CUDA
            negated = (
                cover
                and cover <= guards.NON_CUDA
                and guards.negated_device_test(node.test, self.qualify)
            )
            visit = self._child if cls is ast.IfExp else self._block
            if negated:
                self.cover = saved
            self._branch(node.body, old in ("body", "both"), visit)
            # the other branch of a plain test for CUDA runs where there is none:
            # a CUDA call there fails (`if args.cuda: ... else: model.to("cuda")`).
            # A vendor dispatch (`if torch.version.hip:`) covers both of its sides,
            # and so does a compound test (`if warm or not use_cuda_graphs:`),
            # whose other branch may well be the CUDA one
            plain_cuda_test = cover == guards.NON_CUDA and not negated and node.test.__class__ is not ast.BoolOp
            self.cover = saved if plain_cuda_test else saved | cover
            self._branch(node.orelse, old in ("orelse", "both"), visit)
            self.cover = saved
        elif (cls is ast.For or cls is ast.AsyncFor) and self._loop_cover(node.iter):
            # `for i in range(torch.cuda.device_count()):` runs only where there are devices
            self._child(node.target)
            self._child(node.iter)
            saved = self.cover
            self.cover = saved | self._loop_cover(node.iter)
            self._block(node.body)
            self.cover = saved
            self._block(node.orelse)
        elif cls in _COMPREHENSIONS and (cover := self._comprehension_cover(node.generators)):
            # `[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]`,
            # `[torch.cuda.get_device_name(d.index) for d in devices if d.type == "cuda"]`:
            # the element is made only where the loops run and every `if` holds
            for generator in node.generators:
                self.stack.append(generator)  # as the walk of its fields would
                self._child(generator.target)
                self._child(generator.iter)
                for condition in generator.ifs:
                    self._test(condition)
                self.stack.pop()
            saved = self.cover
            self.cover = saved | cover
            for field in ("elt", "key", "value"):
                if getattr(node, field, None) is not None:
                    self._child(getattr(node, field))
            self.cover = saved
        elif cls in _FUNCTIONS or cls is ast.ClassDef:
            self._definition(node)
        elif cls is _MATCH:
            self._test(node.subject)
            for case in node.cases:
                # `match device.type: case "cuda":` dispatches like an if/elif chain
                cover = guards.test_cover(node.subject, self.qualify, self.guard_names)
                cover |= guards.test_cover(case.pattern, self.qualify, self.guard_names)
                saved = self.cover
                self.cover = saved | cover
                if case.guard is not None:
                    self._test(case.guard)
                self._block(case.body)
                self.cover = saved
        elif cls is ast.Try or cls is _TRY_STAR:
            self._catching.append(_caught(node.handlers))
            self._block(node.body)
            self._catching.pop()
            for handler in node.handlers:
                # `except (ImportError, AttributeError):` holds the old-version fallback
                self._branch(handler, bool(_caught([handler]) & _FALLBACK_ERRORS), self._child)
            self._block(node.orelse)
            self._block(node.finalbody)
        elif cls is ast.Assert:
            self._test(node.test)
            if node.msg is not None:
                self._child(node.msg)
        elif cls is ast.BoolOp:
            saved = self.cover
            for value in node.values:
                self._child(value)
                self.cover = self.cover | self._cover_of(value)
            self.cover = saved
        else:
            self._children(node)
        self.stack.pop()

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and guards.is_skip_decorator(deco):
                self._test(deco)  # @skipIf(not torch.cuda.is_available(), ...) is a device check
            else:
                self._child(deco)
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                self._child(base)
            for kw in node.keywords:
                self._child(kw)
            own = guards.class_cover(node, self.guard_names)
            if own == guards.NON_CUDA and not node.bases and not self._has_other_side():
                # `class CudaRNGStatesTracker:` with no CPU/MPS/ROCm counterpart in the
                # module is a class about CUDA, not CUDA's side of a dispatch
                own = guards.NONE
        else:
            self._child(node.args)
            if node.returns is not None:
                self._child(node.returns)
            own = guards.function_cover(node, self.guard_names)
            if own and guards.names_nvidia_tool(node.name) and not self._has_amd_side():
                # `def parse_nvidia_smi():` in a module with no AMD counterpart is a
                # helper named for the tool it runs, not one vendor's side of a dispatch
                own = guards.NONE
        own = own | guards.decorator_cover(node.decorator_list, self.qualify, self.guard_names, self._probe_value)
        saved = self.cover
        self.cover = saved | own
        self._block(node.body)
        self.cover = saved

    def _has_other_side(self) -> bool:
        """A top-level class or function of the module is named for another
        device or path (CpuTracker, rocm_impl, reference_forward), or a
        sibling file is (backends/cuda_backend.py beside cpu_backend.py)."""
        found = self.memo.get("other_side")
        if found is None:
            # from the text before narrowing: a counterpart naming no token is blanked
            names = _TOP_DEFINITION.findall(self.module_text)
            found = any(vendor_names.names_other_side(n) for n in names) or vendor_paths.sibling_has_other_side(self.path)
            self.memo["other_side"] = found
        return found

    def _cover_of(self, test: ast.AST) -> frozenset[str]:
        return guards.test_cover(test, self.qualify, self.guard_names, self._probe_value)

    def _has_amd_side(self) -> bool:
        """The module names AMD's tools or platform anywhere (its other side)."""
        found = self.memo.get("amd_side")
        if found is None:
            found = self.memo["amd_side"] = self.text_mentions(*guards.AMD_SIDE_WORDS)
        return found

    def _comprehension_cover(self, generators: list[ast.comprehension]) -> frozenset[str]:
        """What a comprehension's loops and `if` clauses guard its element with."""
        cover = guards.NONE
        for generator in generators:
            cover = cover | self._loop_cover(generator.iter)
            for condition in generator.ifs:
                # `if d.type != "cuda"` keeps exactly the elements off CUDA: no cover
                if not guards.negated_device_test(condition, self.qualify):
                    cover = cover | self._cover_of(condition)
        return cover

    def _loop_cover(self, iterable: ast.AST) -> frozenset[str]:
        """A loop over `range(<device count>)` covers like the count's test."""
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Name)
            and iterable.func.id == "range"
            and iterable.args
            and not iterable.keywords
        ):
            return self._cover_of(iterable.args[-1 if len(iterable.args) < 3 else 1])
        return guards.NONE

    def _probe_value(self, name: ast.Name) -> ast.expr | frozenset[str] | None:
        """What a name in a test stands for: the torch.cuda probe it was
        assigned here, or the cover of one it was assigned in the project
        module it is imported from (project_flags)."""
        if name.id not in self._cuda_assigned():  # cheap: never assigned on a "cuda" line here
            return self._imported_cover(name.id)
        value = self.assigned_value(name)
        if value is None:
            return None
        for sub in ast.walk(value):
            if isinstance(sub, ast.Attribute) and (self.qualify(sub) or "").startswith(
                "torch.cuda."
            ):
                return value
        return None

    def _imported_cover(self, name: str) -> frozenset[str] | None:
        covers = self.memo.setdefault("imported_covers", {})
        if name not in covers:
            covers[name] = project_flags.imported_cover(self.path, self.imports, name)
        return covers[name]

    def _cuda_assigned(self) -> frozenset[str]:
        names = self.memo.get("cuda_assigned")
        if names is None:
            source = self.source
            cuda_lines = tokenlines.for_text(source.text).of("cuda")  # searched already
            names = frozenset(
                m.group(1)
                for line in map(source.line, cuda_lines)
                if "=" in line
                for m in [_ASSIGNED.match(line)]
                if m
            )
            self.memo["cuda_assigned"] = names
        return names

    def _branch(self, node, old: bool, visit) -> None:
        self.old_path += old
        visit(node)
        self.old_path -= old

    def _pytestmarks(self, body: list[ast.stmt]) -> frozenset[str]:
        """The cover a `pytestmark` skip marker in this body gives its tests."""
        marked = self.memo.get("pytestmark")
        if marked is None:  # searched once per file: this runs for every block
            marked = self.memo["pytestmark"] = "pytestmark" in self.source.text
        if not marked:
            return guards.NONE
        return guards.pytestmark_cover(body, self.qualify, self.guard_names, self._probe_value)

    def _test(self, test: ast.AST) -> None:
        self.test_depth += 1
        self._child(test)
        self.test_depth -= 1

    def _children(self, node: ast.AST) -> None:
        for field in _walked_fields(node.__class__):
            value = getattr(node, field, None)
            if value.__class__ is list:
                if value and isinstance(value[0], ast.stmt):
                    self._block(value)
                else:
                    for item in value:
                        if isinstance(item, ast.AST):
                            self._child(item)
            elif isinstance(value, ast.AST):
                self._child(value)

    def _child(self, node: ast.AST) -> None:
        end = getattr(node, "end_lineno", None)
        if end is None:
            if node._fields:  # arguments, comprehension, withitem, match_case...
                self._visit(node)
        elif self._hit(node.lineno, end):
            self._visit(node)

    def _block(self, body: list[ast.stmt]) -> None:
        saved = self.cover
        fell_through = 0
        last = (body[-1].end_lineno or 0) if body else 0
        marks = self._pytestmarks(body)
        for stmt in body:
            end = stmt.end_lineno or stmt.lineno
            start = stmt.lineno
            if stmt.__class__ in _DEFINITIONS and stmt.decorator_list:
                start = stmt.decorator_list[0].lineno  # decorators precede `def`
            if self._hit(start, end):
                if marks and stmt.__class__ in _DEFINITIONS:
                    outer = self.cover
                    self.cover = outer | marks  # the tests beside `pytestmark = skipif(...)`
                    self._visit(stmt)
                    self.cover = outer
                else:
                    self._visit(stmt)
            cls = stmt.__class__
            if (cls is ast.If and guards.terminates(stmt.body)) or cls is ast.Assert:
                # what follows `if A and B: return` runs where either is false: no device is implied
                conjunction = cls is ast.If and isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.And)
                if end < last and self._hit(end + 1, last) and not conjunction:
                    self.cover = self.cover | self._cover_of(stmt.test)
                    # `if <new torch>: return new_api(...)` -> what follows is the old path
                    if cls is ast.If and guards.version_gate(stmt.test) in ("orelse", "both"):
                        self.old_path += 1
                        fell_through += 1
        self.cover = saved
        self.old_path -= fell_through


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# fields that never hold a node the walk could visit: names and flags (str,
# int), and expression contexts and operators (nodes without fields, which
# _child passes over)
_LEAF_FIELDS = frozenset(("ctx", "op", "ops", "id", "attr", "arg", "kind", "conversion", "is_async", "level"))


@cache
def _walked_fields(cls: type) -> tuple[str, ...]:
    return tuple(f for f in cls._fields if f not in _LEAF_FIELDS)


@lru_cache(maxsize=256)
def _word_pattern(word: str) -> re.Pattern[str]:
    tail = "(?![A-Za-z0-9])" if word[-1:].isalnum() else ""
    return re.compile("(?<![A-Za-z0-9])" + re.escape(word) + tail)


def _caught(handlers: list[ast.ExceptHandler]) -> frozenset[str]:
    """What the handlers recover from. A handler whose body only raises
    (`except ImportError: raise ImportError("pip install ...")`) recovers from
    nothing: the code it wraps is required, not optional."""
    names: set[str] = set()
    for handler in handlers:
        if all(isinstance(stmt, ast.Raise) for stmt in handler.body):
            continue
        kind = handler.type
        types = kind.elts if isinstance(kind, ast.Tuple) else [kind]
        for item in types:
            if item is None:
                names.add("BaseException")
            elif isinstance(item, ast.Attribute):
                names.add(item.attr)
            elif isinstance(item, ast.Name):
                names.add(item.id)
    return frozenset(names)
