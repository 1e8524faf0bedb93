"""Turning a file's bytes into text the checkers can read, or into the one
PG9xx diagnostic that says why not."""

from __future__ import annotations

import codecs
import io
import os
import tokenize
from dataclasses import dataclass
from pathlib import PurePath

from portagpu.lines import line_starts_bytes
from portagpu.lint import meta

LANGUAGE_BY_SUFFIX = {".py": "python", ".pyi": "python", ".cu": "cuda", ".cuh": "cuda"}


# CUDA sources named for C++ build systems (TensorFlow, Bazel): splitext sees ".cc"
CUDA_DOUBLE_SUFFIXES = (".cu.cc", ".cu.cpp")


def language_of(path: str | PurePath) -> str | None:
    name = str(path).lower()
    if name.endswith(CUDA_DOUBLE_SUFFIXES):
        return "cuda"
    return LANGUAGE_BY_SUFFIX.get(os.path.splitext(name)[1])


@dataclass(frozen=True)
class Undecodable:
    code: str  # PG903 or PG904
    detail: str
    line: int = 1
    col: int = 1


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    starts = line_starts_bytes(data[:offset])
    return len(starts), offset - starts[-1] + 1


def decode_source(data: bytes, language: str = "python") -> str | Undecodable:
    """UTF-8 (BOM allowed), or a Python file's PEP 263 coding; NUL bytes refused."""
    nul = data.find(b"\0")
    if nul >= 0:
        line, col = _line_col(data, nul)
        return Undecodable(meta.NUL_BYTES, f"first NUL at {line}:{col}", line, col)
    try:
        return data.decode("utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")
    except UnicodeDecodeError as exc:
        utf8_error = exc
    if language == "python":
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            encoding = "utf-8"
        if encoding not in ("utf-8", "utf-8-sig"):
            try:
                return data.decode(encoding)
            except (UnicodeDecodeError, LookupError) as exc:
                return Undecodable(meta.NOT_UTF8, f"{encoding}: {exc.reason if isinstance(exc, UnicodeDecodeError) else exc}")
    line, col = _line_col(data, utf8_error.start)
    byte = data[utf8_error.start : utf8_error.start + 1].hex()
    return Undecodable(meta.NOT_UTF8, f"invalid byte 0x{byte} at {line}:{col}", line, col)
