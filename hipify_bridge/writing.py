"""Where `portagpu hipify` writes a translation, and writing it safely: a
backup before --inplace, never over a file hipify did not generate."""

from __future__ import annotations

from pathlib import Path

from portagpu.fileio import new_file_mode, read_regular, write_atomic
from portagpu.lines import line_starts_bytes
from portagpu.lint.source import CUDA_DOUBLE_SUFFIXES

BACKUP_SUFFIX = ".prehip"
MARKER = "// portagpu hipify: generated from {name} ({engine}); edit the original, not this file\n"
GENERATED = "portagpu hipify: generated"


class WriteRefused(Exception):
    pass


def output_path(src: Path, root: Path, out_dir: str | None, inplace: bool) -> Path:
    """foo.cu -> foo.hip beside it (or under out_dir, as src sits under root);
    headers keep their names under out_dir so #include lines still resolve."""
    if inplace:
        return src
    name = src.name
    if out_dir is None:
        if name.endswith(".cuh"):
            return src.with_name(name[:-4] + ".hip.cuh")
        return src.with_name(_strip_cuda_suffix(name) + ".hip")
    rel = src.relative_to(root) if src.is_relative_to(root) else Path(src.name)
    target = Path(out_dir) / rel
    if name.endswith(".cuh"):
        return target
    return target.with_name(_strip_cuda_suffix(name) + ".hip")


def _strip_cuda_suffix(name: str) -> str:
    for suffix in (*CUDA_DOUBLE_SUFFIXES, ".cu"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def write_output(
    path: Path,
    text: str,
    *,
    backup: bool = False,
    may_replace_generated_only: bool = False,
    mode: int | None = None,
) -> None:
    """Atomically; with `backup`, the old file is kept as *.prehip first.
    `mode`: for a new file (a translation takes its source's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        if backup:
            saved = path.with_name(path.name + BACKUP_SUFFIX)
            if saved.exists():
                raise WriteRefused(
                    f"{path}: backup {saved.name} already exists (translated "
                    "before?); remove it to translate again"
                )
            write_atomic(saved, read_regular(path), mode=new_file_mode(like=path))
        elif may_replace_generated_only:
            head = path.read_text(encoding="utf-8", errors="replace")[:200]
            if GENERATED not in head:
                raise WriteRefused(
                    f"{path}: exists and was not written by portagpu hipify; "
                    "not overwritten (use -o DIR)"
                )
    write_atomic(path, text.encode("utf-8"), mode=mode)


def read_text(path: Path) -> str:
    data = read_regular(path)  # a FIFO is refused, never waited on
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = len(line_starts_bytes(data[: exc.start]))
        raise ValueError(
            f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x}); skipped"
        ) from None
