"""Is a name definitely bound at a given point of a module?

A safe fix may only introduce a name (`.cuda()` -> `.to(device)`) that
cannot raise NameError/UnboundLocalError where it lands. Python resolves a
name in the innermost function scope that binds it anywhere (class bodies
are skipped from inside functions), else the module. In that scope the name
is definitely bound when it is a parameter, or when a statement that always
binds it dominates the point: it comes earlier in the same block or in an
enclosing block, or the point is inside the `for`/`with` that binds it. An
`if` binds when both branches do; a `try` when its body and every handler
do. A `del` of the name anywhere in the scope makes nothing definite.

Cost: every scope and every block is summarised once, on first need, so a
file with N calls costs O(file + N * depth), not O(N * file)."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Sequence

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_BLOCK_FIELDS = ("body", "orelse", "finalbody")


class _Scope:
    """Names a function, lambda or class body binds, declares or deletes."""

    def __init__(self, node: ast.AST) -> None:
        self.params: set[str] = set()
        self.local: set[str] = set()
        self.deleted: set[str] = set()
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()
        if isinstance(node, (*_FUNCTIONS, ast.Lambda)):
            args = node.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if arg is not None:
                    self.params.add(arg.arg)
        body = node.body if isinstance(node.body, list) else [node.body]
        for child in body:
            self._collect(child)
        self.local |= self.params
        self.local -= self.declared_global | self.declared_nonlocal

    def _collect(self, node: ast.AST) -> None:
        stack = [node]
        while stack:
            node = stack.pop()
            if isinstance(node, _SCOPES):
                if not isinstance(node, ast.Lambda):
                    self.local.add(node.name)
                # decorators, defaults and bases run here; the body is another scope
                stack.extend(getattr(node, "decorator_list", ()))
                if isinstance(node, ast.ClassDef):
                    stack.extend(node.bases)
                    stack.extend(node.keywords)
                else:
                    stack.extend(
                        d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None
                    )
                continue
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                # only a walrus inside binds here; the first iterable runs here too
                stack.extend(n for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
                continue
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    self.local.add(node.id)
                elif isinstance(node.ctx, ast.Del):
                    self.local.add(node.id)
                    self.deleted.add(node.id)
            elif isinstance(node, ast.Global):
                self.declared_global.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                self.declared_nonlocal.update(node.names)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    self.local.add((alias.asname or alias.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.local.add(node.name)
                self.deleted.add(node.name)  # Python deletes it when the handler ends
            elif isinstance(node, ast.NamedExpr):
                self.local.add(node.target.id)
            elif node.__class__.__name__ in ("MatchAs", "MatchStar") and getattr(
                node, "name", None
            ):
                self.local.add(node.name)
            elif node.__class__.__name__ == "MatchMapping" and getattr(node, "rest", None):
                self.local.add(node.rest)
            stack.extend(ast.iter_child_nodes(node))


def _target_names(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(t) for t in target.elts)) if target.elts else set()
    return set()


def binds(stmt: ast.stmt, name: str) -> bool:
    """Does every normal completion of `stmt` leave `name` bound?"""
    cls = stmt.__class__
    if cls is ast.Assign:
        return any(name in _target_names(t) for t in stmt.targets)
    if cls is ast.AnnAssign:
        return stmt.value is not None and name in _target_names(stmt.target)
    if cls is ast.AugAssign:
        return name in _target_names(stmt.target)
    if cls in (ast.Import, ast.ImportFrom):
        return any((a.asname or a.name).split(".")[0] == name for a in stmt.names)
    if cls in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return stmt.name == name
    if cls in (ast.With, ast.AsyncWith):
        if any(
            i.optional_vars is not None and name in _target_names(i.optional_vars)
            for i in stmt.items
        ):
            return True
        return _block_binds(stmt.body, name)
    if cls is ast.If:  # a branch that cannot fall through binds nothing, needs nothing
        return all(_block_binds(b, name) or _terminates(b) for b in (stmt.body, stmt.orelse))
    if cls is ast.Try or cls.__name__ == "TryStar":
        if _block_binds(stmt.finalbody, name):
            return True
        ok = _block_binds(stmt.body, name) or _block_binds(stmt.orelse, name)
        return ok and all(_block_binds(h.body, name) or _terminates(h.body) for h in stmt.handlers)
    if cls is ast.Expr and isinstance(stmt.value, ast.NamedExpr):
        return stmt.value.target.id == name
    return False


def _block_binds(body: Sequence[ast.stmt], name: str) -> bool:
    return any(binds(stmt, name) for stmt in body)


def _terminates(body: Sequence[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def _statements_on(tree: ast.Module, lines: Sequence[int] | None):
    """Every statement, or (given sorted `lines`) those whose first line is
    one of them, found without walking the statements' expressions."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field, ()) or ():
                if isinstance(child, ast.stmt):
                    if lines is None or _any_within(lines, child.lineno, child.end_lineno or child.lineno):
                        yield child
                        stack.append(child)
                else:  # an except handler or a match case: its body holds statements
                    stack.append(child)


def _any_within(lines: Sequence[int], lo: int, hi: int) -> bool:
    at = bisect.bisect_left(lines, lo)
    return at < len(lines) and lines[at] <= hi


class Bindings:
    """Definite-binding queries over one module; caches are per scope and block."""

    def __init__(self, tree: ast.Module, *, del_lines: Sequence[int] | None = None) -> None:
        """del_lines: the sorted lines whose text holds the word `del` (a
        cheap text test; None: unknown). Deleted names are looked for only in
        the statements spanning them: every `del` statement starts on one."""
        self.tree = tree
        self._del_lines = del_lines
        self._scopes: dict[int, _Scope] = {}
        self._index: dict[
            tuple[int, str], dict[int, int]
        ] = {}  # (parent, field) -> stmt id -> index
        self._first: dict[
            tuple[int, str, str], int
        ] = {}  # (parent, field, name) -> first binding index
        self._deleted: set[str] | None = None if del_lines is None or del_lines else set()

    def definitely_bound(self, name: str, path: Sequence[ast.AST]) -> bool:
        """`path`: the nodes from the module's top statement down to the point."""
        chain: list[ast.AST] = [self.tree, *path]
        point = len(chain) - 1
        from_function = False  # class bodies are invisible from inside a function
        while True:
            at = self._scope_of(chain, point)
            scope_node = chain[at]
            if at == 0:
                return name not in self._deleted_anywhere() and self._dominated(
                    chain, 0, point, name
                )
            if isinstance(scope_node, ast.ClassDef) and from_function:
                point = at
                continue
            scope = self._scope(scope_node)
            if name in scope.declared_global:
                return name not in self._deleted_anywhere() and self._dominated(chain, 0, at, name)
            if name in scope.local:
                if name in scope.deleted:
                    return False
                return name in scope.params or self._dominated(chain, at, point, name)
            if name in scope.declared_nonlocal:
                from_function = True
            elif isinstance(scope_node, (*_FUNCTIONS, ast.Lambda)):
                from_function = True
            point = at  # free here: look it up where this scope was defined

    def _deleted_anywhere(self) -> set[str]:
        """Names some `del` removes (a global can be deleted from any function)."""
        if self._deleted is None:
            self._deleted = {
                n.id
                for statement in _statements_on(self.tree, self._del_lines)
                if isinstance(statement, ast.Delete)
                for n in ast.walk(statement)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)
            }
        return self._deleted

    def _scope_of(self, chain: list[ast.AST], point: int) -> int:
        """Index in chain of the scope whose body holds chain[point] (its
        decorators, defaults and bases belong to the scope around it)."""
        for at in range(point - 1, 0, -1):
            node = chain[at]
            if isinstance(node, ast.Lambda):
                if chain[at + 1] is node.body:
                    return at
            elif isinstance(node, _SCOPES) and isinstance(chain[at + 1], ast.stmt):
                if self._locate(node, chain[at + 1]) is not None:
                    return at
        return 0

    def _scope(self, node: ast.AST) -> _Scope:
        found = self._scopes.get(id(node))
        if found is None:
            found = self._scopes[id(node)] = _Scope(node)
        return found

    def _dominated(self, chain: list[ast.AST], top: int, point: int, name: str) -> bool:
        """Is chain[point] dominated, inside the scope chain[top], by a binding of name?"""
        for k in range(top, point):
            parent, child = chain[k], chain[k + 1]
            if not isinstance(child, ast.stmt):
                continue  # inside an expression, or an except/case clause
            located = self._locate(parent, child)
            if located is None:
                continue
            field, index = located
            if field == "body" and _binds_for_body(parent, name):
                return True
            if self._first_binding(parent, field, name) < index:
                return True
        return False

    def _locate(self, parent: ast.AST, child: ast.stmt) -> tuple[str, int] | None:
        for field in _BLOCK_FIELDS:
            body = getattr(parent, field, None)
            if not isinstance(body, list) or not body:
                continue
            key = (id(parent), field)
            index = self._index.get(key)
            if index is None:
                index = self._index[key] = {id(s): i for i, s in enumerate(body)}
            if id(child) in index:
                return field, index[id(child)]
        return None

    def _first_binding(self, parent: ast.AST, field: str, name: str) -> int:
        key = (id(parent), field, name)
        found = self._first.get(key)
        if found is None:
            body = getattr(parent, field)
            found = next((i for i, stmt in enumerate(body) if binds(stmt, name)), len(body))
            self._first[key] = found
        return found


def _binds_for_body(parent: ast.AST, name: str) -> bool:
    """Is `name` bound throughout the body of `parent` (a for target, a with ... as)?"""
    if isinstance(parent, (ast.For, ast.AsyncFor)):
        return name in _target_names(parent.target)
    if isinstance(parent, (ast.With, ast.AsyncWith)):
        return any(
            i.optional_vars is not None and name in _target_names(i.optional_vars)
            for i in parent.items
        )
    return False
