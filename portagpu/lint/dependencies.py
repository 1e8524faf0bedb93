"""Other files a file's findings depend on, noted while it is linted (a guard
flag read from the project module it is imported from): the findings cache
keeps them beside the findings and treats a changed one as a miss, as a
changed file itself is. One file is linted at a time in a process."""

from __future__ import annotations

import os

Dependency = tuple[str, int, int]  # path, mtime_ns, size

_noted: set[Dependency] = set()


def note(path: str, st: os.stat_result) -> None:
    _noted.add((path, st.st_mtime_ns, st.st_size))


def take() -> tuple[Dependency, ...]:
    """What was noted since the last call, and forget it."""
    found = tuple(sorted(_noted))
    _noted.clear()
    return found


def unchanged(dependencies: tuple[Dependency, ...]) -> bool:
    for path, mtime_ns, size in dependencies:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if (st.st_mtime_ns, st.st_size) != (mtime_ns, size):
            return False
    return True
