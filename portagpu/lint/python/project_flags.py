"""Flags a project computes in one module and tests in another.

`from pkg._guards import HAS_FAST_PATH` then `if HAS_FAST_PATH: x.to("cuda")`:
the guard is a `torch.cuda` probe assigned at the top of `pkg/_guards.py`.
The flag's name says nothing of a device, so the test reads as no guard
unless the other module is read. Only constants (`HAS_FAST_PATH`,
`_SUPPORTS_FLEX`) are looked up, as flags are written. The module is found beside the linted file
(a relative import) or under one of its parent folders (an absolute one), as
Python would find it when run from the project's root; only its top-level
assignments are read, and only in a module that mentions `cuda` at all."""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache

from portagpu.lint import dependencies
from portagpu.lint.python import guards
from portagpu.lint.python.imports import ImportMap

MAX_PARENTS = 8  # folders searched upwards for an absolute import's package
MAX_HOPS = 2  # re-exports followed (`from ._guards import FLAG` in a package's __init__)
MAX_BYTES = 2_000_000  # a module larger than this is data, not a flags module
_CONSTANT = re.compile(r"_*[A-Z][A-Z0-9]*_[A-Z0-9_]*$")  # HAS_FAST_PATH, _SUPPORTS_FLEX


def imported_cover(path: str, imports: ImportMap, name: str) -> frozenset[str] | None:
    """The cover of the `torch.cuda` probe that `name`, imported from one of
    the project's modules, was assigned there (`FLAG =
    torch.cuda.is_available() and ...`), read with that module's imports; or
    None."""
    if not _CONSTANT.match(name) or guards.name_cover(name):
        # a module's flag is a constant (`HAS_FAST_PATH`; `config`, `device` are
        # not), and one that names its device (`TEST_CUDA`, `IS_HIP`) says so itself
        return None
    source = _import_of(imports.nodes, name)
    if source is None:
        return None
    return _probe(os.path.abspath(path), *source, MAX_HOPS)


def _import_of(nodes: list[ast.Import | ast.ImportFrom], name: str) -> tuple[str, int, str] | None:
    """(module, level, name there) of the last `from module import name`."""
    for node in reversed(nodes):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return node.module or "", node.level, alias.name
    return None


def _probe(path: str, module: str, level: int, name: str, hops: int) -> frozenset[str] | None:
    file = module_file(path, module, level)
    if file is None:
        return None
    try:
        st = os.stat(file)
    except OSError:
        return None
    dependencies.note(file, st)  # the file's findings now depend on this module
    value = _module_probes(file, st.st_mtime_ns, st.st_size).get(name)
    if isinstance(value, tuple) and hops > 0:  # re-exported from another module
        return _probe(file, *value, hops - 1)
    return value if isinstance(value, frozenset) else None


def module_file(path: str, module: str, level: int) -> str | None:
    """The .py file (or package __init__.py) that `from <dots><module>
    import ...` in the file at `path` loads, or None."""
    parts = [p for p in module.split(".") if p]
    folder = os.path.dirname(path)
    if level:
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        return _in_folder(folder, parts)
    if not parts:
        return None
    for _ in range(MAX_PARENTS):
        found = _in_folder(folder, parts)
        if found is not None:
            return found
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def _in_folder(folder: str, parts: list[str]) -> str | None:
    base = os.path.join(folder, *parts)
    # `from . import FLAG` reads the package's __init__.py, never a file named like its folder
    candidates = (base + ".py", os.path.join(base, "__init__.py")) if parts else (os.path.join(base, "__init__.py"),)
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    return None


@lru_cache(maxsize=64)
def _module_probes(file: str, mtime_ns: int, size: int) -> dict[str, frozenset[str] | tuple[str, int, str]]:
    """Top-level name -> the cover of the `torch.cuda` probe assigned to it
    (the last assignment wins), or -> (module, level, name) where it is
    re-exported. Covers, not trees, are kept: a cached module holds no AST.
    The cache key holds the file's mtime and size: an edited module is read again."""
    if size > MAX_BYTES:
        return {}
    try:
        with open(file, encoding="utf-8") as handle:
            text = handle.read()
        # a module that never says cuda computes no probe; a package's
        # __init__ may still re-export one
        tree = ast.parse(text) if "cuda" in text or os.path.basename(file) == "__init__.py" else None
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    if tree is None:
        return {}
    imports = ImportMap()
    found: dict[str, frozenset[str] | tuple[str, int, str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            imports.add(stmt)
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    found[alias.asname or alias.name] = (stmt.module or "", stmt.level, alias.name)
            continue
        targets, value = _assignment(stmt)
        for target in targets:
            if value is not None and _probes_cuda(value, imports):
                found[target] = guards.test_cover(value, imports.qualify)
            else:
                found.pop(target, None)
    return found


def _assignment(stmt: ast.stmt) -> tuple[list[str], ast.expr | None]:
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)], stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id], stmt.value
    return [], None


def _probes_cuda(value: ast.expr, imports: ImportMap) -> bool:
    return any(
        isinstance(sub, ast.Attribute) and (imports.qualify(sub) or "").startswith("torch.cuda.")
        for sub in ast.walk(value)
    )
