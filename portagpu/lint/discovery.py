"""Which files `portagpu lint PATHS` looks at: .py/.pyi for the Python side
(a .pyi stub is counted, never checked: engine.py),
.cu/.cuh for the CUDA side; .gitignore files and config `exclude` globs are
respected; symlink loops and unreadable folders become PG9xx diagnostics."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from portagpu.fileio import not_regular
from portagpu.lint import meta
from portagpu.lint.source import (
    CUDA_DOUBLE_SUFFIXES,
    DEPENDENCY_SUFFIXES,
    LANGUAGE_BY_SUFFIX,
    language_of,
    named_language,
)

# DEPENDENCY_SUFFIXES are candidates only: language_of keeps requirements*.txt and pyproject.toml
_SUFFIXES = tuple(LANGUAGE_BY_SUFFIX) + CUDA_DOUBLE_SUFFIXES + DEPENDENCY_SUFFIXES
_SUFFIXES += tuple(s.upper() for s in _SUFFIXES)

# folders nobody wants linted (ruff's defaults); applied to what the walk
# finds, never to a path named on the command line
DEFAULT_EXCLUDE_DIRS = frozenset(
    {
        ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
        ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype",
        ".ruff_cache", ".svn", ".tox", ".venv", ".vscode", "__pypackages__", "_build",
        "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
        "__pycache__", ".portagpu_cache",
    }
)


@dataclass(frozen=True)
class Candidate:
    path: str  # as it will be reported
    language: str
    real: str  # symlinks resolved: the identity of the file


@dataclass(frozen=True)
class Problem:
    """A path that could not be walked: reported as one PG9xx diagnostic."""

    path: str
    code: str
    detail: str


class _Ignores:
    """gitignore-style specs, each anchored at a folder."""

    def __init__(self) -> None:
        self._specs: list[tuple[str, object]] = []

    def add(self, base: str, lines: Sequence[str]) -> None:
        import pathspec

        lines = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            return
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except Exception:  # a line git would not accept either (`!`): skip that line, as git does
            spec = pathspec.GitIgnoreSpec.from_lines([ln for ln in lines if _valid_pattern(ln)])
        self._specs.append((os.path.abspath(base), spec))

    def add_file(self, folder: str) -> None:
        path = os.path.join(folder, ".gitignore")
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                self.add(folder, fh.read().splitlines())
        except OSError:
            pass

    def with_file(self, folder: str) -> _Ignores:
        """These specs plus folder/.gitignore (self if there is none)."""
        if not os.path.isfile(os.path.join(folder, ".gitignore")):
            return self
        other = _Ignores()
        other._specs = list(self._specs)
        other.add_file(folder)
        return other

    def ignored(self, path: str, is_dir: bool) -> bool:
        for base, spec in self._specs:
            prefix = base.rstrip(os.sep) + os.sep
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix) :].replace(os.sep, "/") + ("/" if is_dir else "")
            if spec.match_file(rel):  # type: ignore[attr-defined]
                return True
        return False


def _valid_pattern(line: str) -> bool:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except Exception:  # noqa: BLE001 - pathspec's errors share no base class across versions
        return False
    return True


def _excluded_explicitly(path: str, user: _Ignores, respect_gitignore: bool) -> bool:
    is_dir = os.path.isdir(path)
    if user.ignored(path, is_dir):
        return True
    if not respect_gitignore:
        return False
    ignores = _Ignores()
    for folder in _git_ancestors(path if is_dir else os.path.dirname(path)) + [os.path.dirname(path)]:
        ignores.add_file(folder)
    return ignores.ignored(path, is_dir)


def _git_ancestors(folder: str) -> list[str]:
    """Folders from the enclosing git root (or `folder` if none) down to folder's parent."""
    chain = []
    current = os.path.abspath(folder)
    while True:
        parent = os.path.dirname(current)
        if os.path.isdir(os.path.join(current, ".git")) or parent == current:
            break
        current = parent
        chain.append(current)
    if not os.path.isdir(os.path.join(current, ".git")):
        return []
    return list(reversed(chain))


def _display(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


def discover(
    paths: Sequence[str | os.PathLike[str]],
    *,
    root: Path,
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    force_exclude: bool = False,
) -> Iterator[Candidate | Problem]:
    """Yields files to lint (each once) and problems met on the way. A path
    named explicitly is linted even if excluded, unless `force_exclude` (for
    pre-commit, which names every changed file)."""
    cwd = os.getcwd()
    user = _Ignores()
    user.add(str(root.resolve()), list(exclude))
    seen: set[str] = set()

    def emit(real: str, shown: str, language: str) -> Iterator[Candidate]:
        if real not in seen:
            seen.add(real)
            yield Candidate(shown, language, real)

    for given in paths:
        path = os.path.abspath(os.fspath(given))
        shown = _display(path, cwd)
        try:
            st = os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                yield Problem(shown, meta.SYMLINK_LOOP, "the link resolves to itself")
            else:
                yield Problem(shown, meta.UNREADABLE, exc.strerror or str(exc))
            continue
        if force_exclude and _excluded_explicitly(path, user, respect_gitignore):
            continue
        if not os.path.isdir(path):
            why = not_regular(st.st_mode)
            if why is not None:  # a FIFO would block the read forever
                yield Problem(shown, meta.UNREADABLE, why)
                continue
            yield from emit(os.path.realpath(path), shown, named_language(path))
            continue
        ignores = _Ignores()
        if respect_gitignore:
            for folder in _git_ancestors(path):
                ignores.add_file(folder)
            if ignores.ignored(path, True):
                # a folder named on the command line is linted even if a
                # parent's .gitignore hides it (as ruff does)
                ignores = _Ignores()
        walk_user = user
        if user.ignored(path, True):
            # a folder the config excludes, named on the command line: lint
            # what is inside (ruff's behaviour; --force-exclude keeps it out)
            walk_user = _Ignores()
        where = _Where(path, os.path.realpath(path), shown, cwd)
        yield from _walk(where, ignores, walk_user, respect_gitignore, frozenset({(st.st_dev, st.st_ino)}), emit)


@dataclass(frozen=True)
class _Where:
    """A folder as walked, as resolved, and as shown to the user."""

    path: str
    real: str
    shown: str
    cwd: str

    def child(self, name: str, real: str | None = None) -> _Where:
        return _Where(
            os.path.join(self.path, name),
            real or os.path.join(self.real, name),
            name if self.shown in ("", ".") else os.path.join(self.shown, name),
            self.cwd,
        )


def _walk(top, ignores, user, respect_gitignore, ancestors, emit):
    """Iterative (a stack, not recursive generators: every yielded file would
    otherwise climb through one generator frame per folder level)."""
    cwd = top.cwd
    stack = [(top, ignores, ancestors)]
    while stack:
        where, ignores, ancestors = stack.pop()
        folder = where.path
        if respect_gitignore:
            ignores = ignores.with_file(folder)
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            yield Problem(_display(folder, cwd), meta.UNREADABLE, exc.strerror or str(exc))
            continue
        subfolders = []
        real_prefix = where.real.rstrip(os.sep) + os.sep
        shown_prefix = "" if where.shown in ("", ".") else where.shown.rstrip(os.sep) + os.sep
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()  # follows symlinks
            except OSError:
                is_dir = False
            if not is_dir and not name.endswith(_SUFFIXES):
                if not entry.is_symlink():
                    continue  # the common case: some other kind of file
            path = entry.path
            link = entry.is_symlink()
            if link:
                try:
                    os.stat(path)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        yield Problem(_display(path, cwd), meta.SYMLINK_LOOP, "the link resolves to itself")
                    elif language_of(path):  # a dangling link to a source file
                        yield Problem(_display(path, cwd), meta.UNREADABLE, exc.strerror or str(exc))
                    continue
            if is_dir:
                if name in DEFAULT_EXCLUDE_DIRS:
                    continue
                if user.ignored(path, True) or (respect_gitignore and ignores.ignored(path, True)):
                    continue
                st = entry.stat()
                key = (st.st_dev, st.st_ino)
                if key in ancestors:
                    target = os.path.realpath(path)
                    yield Problem(_display(path, cwd), meta.SYMLINK_LOOP, f"points back to {_display(target, cwd)}")
                    continue
                child = where.child(name, os.path.realpath(path) if link else None)
                subfolders.append((child, ignores, ancestors | {key}))
                continue
            language = language_of(path)
            if language is None:
                continue
            if user.ignored(path, False) or (respect_gitignore and ignores.ignored(path, False)):
                continue
            if not entry.is_file():  # from the directory entry: no extra system call
                try:
                    why = not_regular(entry.stat().st_mode) or "not a regular file"
                except OSError as exc:
                    why = exc.strerror or str(exc)
                yield Problem(_display(path, cwd), meta.UNREADABLE, why)
                continue
            real = os.path.realpath(path) if link else real_prefix + name
            yield from emit(real, shown_prefix + name, language)
        stack.extend(reversed(subfolders))
