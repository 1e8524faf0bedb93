"""Translation units, not files: each CUDA input with the local headers it
includes (any extension), where each translation is written, and which
include lines must change to reach the translated headers.

A header is followed when `#include "x"` resolves beside the including file
or in an include directory, or `#include <x>` resolves in an include
directory the user (or compile_commands.json) named; system and CUDA
headers are not followed (the API engine renames those).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

INCLUDE_LINE = re.compile(rb'(?m)^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]')


@dataclass(frozen=True)
class BuildFlags:
    """What the project compiles a file with: -I dirs, -D defines, -std."""

    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    std: str | None = None

    def merged(self, other: BuildFlags) -> BuildFlags:
        dirs = tuple(dict.fromkeys(self.include_dirs + other.include_dirs))
        defines = tuple(dict.fromkeys(self.defines + other.defines))
        return BuildFlags(dirs, defines, self.std or other.std)


@dataclass
class SourceFile:
    path: Path  # resolved
    shown: Path  # as the user named it (or as found from an include)
    root: Path  # the input folder it belongs to (output paths are relative to base)
    is_unit: bool  # named by the user (a .cu file or an input .cuh), not only included
    flags: BuildFlags = BuildFlags()
    includes: list[tuple[int, int, str, Path]] = field(
        default_factory=list
    )  # span, spelling, target
    included_by: list[Path] = field(default_factory=list)
    text: str = ""
    error: str | None = None


def parse_compile_commands(path: Path) -> dict[Path, BuildFlags]:
    """file -> flags from a compile_commands.json (`arguments` or `command`)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[Path, BuildFlags] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or "file" not in entry:
            continue
        directory = Path(entry.get("directory", path.parent))
        args = entry.get("arguments") or shlex.split(entry.get("command", ""))
        out[(directory / entry["file"]).resolve()] = flags_from_args(args, directory)
    return out


def flags_from_args(args: list[str], directory: Path) -> BuildFlags:
    dirs, defines, std = [], [], None
    i = 0
    while i < len(args):
        arg = args[i]
        value = None
        for flag in ("-I", "-isystem", "-D", "--std", "-std"):
            if arg == flag and i + 1 < len(args):
                value, i = args[i + 1], i + 1
            elif arg.startswith(flag) and arg != flag:
                value = arg[len(flag) :].lstrip("=")
            if value is not None:
                if flag in ("-I", "-isystem"):
                    dirs.append(str((directory / value).resolve()))
                elif flag == "-D":
                    defines.append(value)
                else:
                    std = value
                break
        i += 1
    return BuildFlags(tuple(dirs), tuple(defines), std)


def find_compile_commands(start: Path, levels: int = 6) -> Path | None:
    """compile_commands.json in `start` or one of its parents (or their build/)."""
    folder = start if start.is_dir() else start.parent
    for _ in range(levels):
        for candidate in (
            folder / "compile_commands.json",
            folder / "build" / "compile_commands.json",
        ):
            if candidate.is_file():
                return candidate
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def resolve_include(
    spelling: str, quoted: bool, includer: Path, include_dirs: tuple[str, ...]
) -> Path | None:
    candidates = ([includer.parent / spelling] if quoted else []) + [
        Path(d) / spelling for d in include_dirs
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    return None


class UnitSet:
    """Every file of a run's translation units: inputs first, then headers."""

    def __init__(
        self, inputs: list[tuple[Path, Path]], flags: BuildFlags, use_compile_commands: bool = True
    ) -> None:
        self.files: dict[Path, SourceFile] = {}
        self.order: list[Path] = []
        self.base_flags = flags
        self._commands: dict[Path, dict[Path, BuildFlags]] = {}
        for shown, root in inputs:
            path = shown.resolve()
            if path in self.files:
                self.files[path].is_unit = True
                continue
            unit_flags = flags
            if use_compile_commands:
                unit_flags = flags.merged(self._compile_commands_flags(path))
            self._add(SourceFile(path, shown, root.resolve(), True, unit_flags))
        queue = list(self.order)
        while queue:
            queue += self._follow(self.files[queue.pop(0)])

    def _compile_commands_flags(self, path: Path) -> BuildFlags:
        found = find_compile_commands(path)
        if found is None:
            return BuildFlags()
        if found not in self._commands:
            self._commands[found] = parse_compile_commands(found)
        return self._commands[found].get(path, BuildFlags())

    def _add(self, source: SourceFile) -> None:
        self.files[source.path] = source
        self.order.append(source.path)
        try:
            data = source.path.read_bytes()
        except OSError as exc:
            source.error = f"{source.shown}: {exc.strerror or exc}"
            return
        if b"\0" in data[:4096]:
            source.error = f"{source.shown}: binary file, not C/C++; skipped"
            return
        try:
            source.text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            source.error = (
                f"{source.shown}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x}); skipped"
            )

    def _follow(self, source: SourceFile) -> list[Path]:
        if source.error:
            return []
        found = []
        data = source.text.encode("utf-8", "surrogatepass")
        for match in INCLUDE_LINE.finditer(data):
            spelling = match.group(2).decode("utf-8", "replace").strip()
            target = resolve_include(
                spelling, match.group(1) == b'"', source.path, source.flags.include_dirs
            )
            if target is None:
                continue
            source.includes.append((match.start(2), match.end(2), spelling, target))
            if target not in self.files:
                shown = (
                    Path(os.path.relpath(target))
                    if not target.is_relative_to(Path.cwd())
                    else target.relative_to(Path.cwd())
                )
                self._add(SourceFile(target, shown, source.root, False, source.flags))
                found.append(target)
            self.files[target].included_by.append(source.path)
        return found

    @property
    def headers(self) -> list[SourceFile]:
        return [self.files[p] for p in self.order if not self.files[p].is_unit]

    def base_of(self, root: Path) -> Path:
        """Where the output tree of an input folder starts: the folder itself,
        or a parent when its units include headers from outside it."""
        members = [p for p in self.order if self.files[p].root == root]
        return Path(os.path.commonpath([str(root), *(str(p.parent) for p in members)]))
