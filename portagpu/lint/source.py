"""Turning a file's bytes into text the checkers can read, or into the one
PG9xx diagnostic that says why not."""

from __future__ import annotations

import codecs
import io
import os
import re
import tokenize
from dataclasses import dataclass
from pathlib import PurePath

from portagpu.lines import line_starts_bytes
from portagpu.lint import meta

# .ipynb: Python in a JSON envelope; portagpu/lint/notebook.py unwraps its code cells.
# A C/C++ header is linted as CUDA when its text holds device code (and is
# never parsed as Python): see header_language.
HEADER = "header"
# A C++ source file is linted as CUDA when it holds device code or calls CUDA
# (includes a CUDA runtime or library header: cuDNN, cuBLAS, NCCL, ...): see
# cxx_language. Host code that calls cuDNN's graph API ports no more 1:1 than a .cu does.
CXX = "cxx"
SNIFFED = (HEADER, CXX)
LANGUAGE_BY_SUFFIX = {
    ".py": "python",
    ".pyi": "python",
    ".ipynb": "python",
    ".cu": "cuda",
    ".cuh": "cuda",
    **dict.fromkeys((".h", ".hpp", ".hxx", ".hh", ".inl"), HEADER),
    **dict.fromkeys((".cpp", ".cc", ".cxx", ".c++"), CXX),
}

# dependency lists (requirements*.txt, pyproject.toml): checked for NVIDIA-only pins
DEPENDENCY_SUFFIXES = (".txt", ".in", ".toml")
_REQUIREMENTS_NAME = re.compile(r"^(?:requirements|constraints|reqs?)(?:[-_.][\w.-]*)?\.(?:txt|in)$")


# CUDA sources named for C++ build systems (TensorFlow, Bazel): splitext sees ".cc"
CUDA_DOUBLE_SUFFIXES = (".cu.cc", ".cu.cpp")


def language_of(path: str | PurePath) -> str | None:
    name = str(path).lower()
    if name.endswith(CUDA_DOUBLE_SUFFIXES):
        return "cuda"
    language = LANGUAGE_BY_SUFFIX.get(os.path.splitext(name)[1])
    if language is None and name.endswith(DEPENDENCY_SUFFIXES) and is_dependency_file(name):
        return "deps"
    return language


def named_language(path: str | PurePath) -> str:
    """What a file named on the command line is linted as: by its name where
    that says (language_of), a dependency list for any other .txt/.in/.toml
    (requirements under another name: requirments_cu118.txt, pixi.toml),
    else Python (a script with no suffix, as ruff reads it)."""
    language = language_of(path)
    if language is not None:
        return language
    return "deps" if str(path).lower().endswith(DEPENDENCY_SUFFIXES) else "python"


def is_stub(path: str | PurePath) -> bool:
    """A type stub (.pyi): it declares types and runs nothing, so no idiom in
    it can break on another vendor. Discovered (and counted), never checked."""
    return str(path).lower().endswith(".pyi")


def is_dependency_file(path: str | PurePath) -> bool:
    """pyproject.toml, requirements*.txt / constraints*.txt, or a .txt in a requirements/ folder."""
    parts = re.split(r"[\\/]", str(path).lower())
    base = parts[-1]
    if base == "pyproject.toml" or _REQUIREMENTS_NAME.match(base):
        return True
    return len(parts) > 1 and parts[-2] == "requirements" and base.endswith((".txt", ".in"))


def is_notebook(path: str | PurePath) -> bool:
    return str(path).lower().endswith(".ipynb")


# Tokens only CUDA device code, a CUDA warp constant or a CUTLASS/CuTe include or
# qualifier writes (device code behind a project's own qualifier macro, `MY_DEVICE`, still
# says __syncthreads or blockIdx). A plain C++ header has none; each is one fast
# substring search. Not `__CUDA_ARCH__`: host/device portability headers
# (torch's c10 macros, fxdiv.h) test it around code with a plain C++ fallback.
CUDA_HEADER_MARKERS = (
    b"__device__", b"__global__", b"__shfl", b"threadIdx", b"WARP", b"cutlass/", b"cute/",
    b"__syncthreads", b"blockIdx", b"CUTLASS_DEVICE", b"CUTLASS_HOST_DEVICE",
)


# A GPU toolkit's own headers (the CUDA toolkit's carry NVIDIA's EULA notice;
# HIP's and ROCm's carry AMD's copyright) are not project code: vendored or
# installed copies of them are not linted.
TOOLKIT_NOTICES = (b"Licensed Deliverables", b"Advanced Micro Devices")


# Inline PTX with no other device marker (a header of `asm volatile` macros):
# an `asm` whose text uses PTX's typed instructions or registers, which x86 or
# Arm assembly never spells
_PTX_ASM = re.compile(
    rb"(?:\basm\b|__asm__)[^;]{0,200}?\b(?:[a-z]+\.(?:[usbf](?:8|16|32|64)|pred|global|shared)\b|%%(?:laneid|warpid|tid))"
)


# C/C++ comments: PTX found in a header is asked again without them
_COMMENTS = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)


def _holds_device_code(data: bytes) -> bool:
    """Whether a header holds device code. A marker only in comments (a
    commented-out `__device__` helper in a vendor shim) is none: each
    occurrence found is checked, and the first outside a comment decides."""
    for marker in [m for m in CUDA_HEADER_MARKERS if m in data]:  # most headers: none
        at = data.find(marker)
        while at >= 0:
            if not _in_comment(data, at):
                return True
            at = data.find(marker, at + len(marker))
    if b"asm" not in data or _PTX_ASM.search(data) is None:
        return False
    return _PTX_ASM.search(_COMMENTS.sub(b" ", data)) is not None  # PTX found: not only in comments?


def _in_comment(data: bytes, at: int) -> bool:
    """Whether offset `at` lies in a `//` or `/* */` comment (a `//` inside a
    string on the same line reads as one too: a header is then only less
    likely to count as CUDA)."""
    if b"//" in data[data.rfind(b"\n", 0, at) + 1 : at]:
        return True
    opened = data.rfind(b"/*", 0, at)
    return opened >= 0 and data.find(b"*/", opened + 2, at) < 0


def _project_cuda(data: bytes) -> str | None:
    """"cuda", unless the file is a GPU toolkit's own (its notice up top)."""
    head = data[:4096]
    return None if any(notice in head for notice in TOOLKIT_NOTICES) else "cuda"


def header_language(data: bytes) -> str | None:
    """"cuda" for a header holding device code, None for any other header
    (or for a GPU toolkit's own header)."""
    return _project_cuda(data) if _holds_device_code(data) else None


# `#include <cuda_runtime.h>`, `"cudnn.h"`, `<cublasLt.h>`, `<nccl.h>`, `<nvrtc.h>`, `<mma.h>`
_CUDA_INCLUDE = re.compile(
    rb"^[ \t]*#[ \t]*include[ \t]*[<\"](?:cuda[\w.]*|cudnn\w*|cublas\w*|cusparse\w*|cufft\w*|curand\w*"
    rb"|cusolver\w*|cutensor\w*|nccl|nvrtc|nvml|mma|cooperative_groups|cub/|thrust/|cutlass/|cute/)",
    re.MULTILINE,
)


def cxx_language(data: bytes) -> str | None:
    """"cuda" for a C++ source with device code or CUDA calls (a CUDA include), else None."""
    calls_cuda = b"include" in data and _CUDA_INCLUDE.search(data) is not None
    return _project_cuda(data) if _holds_device_code(data) or calls_cuda else None


def sniffed_language(language: str, data: bytes) -> str | None:
    """What a header or C++ source is linted as ("cuda"), or None: plain C/C++."""
    return header_language(data) if language == HEADER else cxx_language(data)


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
