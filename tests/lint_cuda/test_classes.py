"""The classes of problem measured on real CUDA code (benchmarks/lint_truth.py),
each reproduced by a small file written for these tests in
tests/corpus/lint_cuda_classes/, whose `expect: PGnnn` markers name every
finding. The folder is linted as a user would: discovery, header sniffing,
every target on."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from portagpu.lint.config import LintConfig
from portagpu.lint.engine import lint_one, lint_paths
from portagpu.lint.model import LintSettings
from portagpu.lint.salvage import blank_bad_lines, string_module
from portagpu.lint.source import CXX, HEADER, cxx_language, header_language, language_of

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "lint_cuda_classes"
EXPECT = re.compile(r"expect: ((?:PG\d{3}\s*)+)")


def _expected() -> set[tuple[str, int, str]]:
    out = set()
    for path in sorted(CORPUS.rglob("*")):
        if path.is_file() and path.suffix != ".md":
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                for match in EXPECT.finditer(line):
                    for code in match.group(1).split():
                        out.add((path.relative_to(CORPUS).as_posix(), number, code))
    return out


@pytest.fixture(scope="module")
def linted(tmp_path_factory) -> set[tuple[str, int, str]]:
    root = tmp_path_factory.mktemp("classes")
    shutil.copytree(CORPUS, root / "tree")
    result = lint_paths([root / "tree"], LintConfig(root=root, cache=False, jobs=1))
    base = (root / "tree").resolve()
    return {
        (Path(f.path).resolve().relative_to(base).as_posix(), f.line, f.code)
        for f in result.findings
    }


def test_every_expected_finding_and_nothing_else(linted):
    assert linted == _expected()


@pytest.mark.parametrize("name", ["kernels/host_only.hpp", "kernels/hip_port.h", "host/plain_math.cc"])
def test_headers_without_cuda_work_are_quiet_and_never_python(linted, name):
    assert not [f for f in linted if f[0] == name]


def test_header_language_is_decided_by_content():
    assert language_of("a/b/kernels.hpp") == HEADER and language_of("x.inl") == HEADER
    assert header_language(b"__device__ int f();") == "cuda"
    # a marker only in comments (a shim's commented-out helper) makes no device code
    assert header_language(b"#define cublasCreate mublasCreate\n/* __device__ float twice(float);\n*/\n") is None
    assert header_language(b"// __global__ kernels live elsewhere\n#define N 4\n") is None
    assert header_language(b"// helpers\n__device__ int f(); /* __global__ */\n") == "cuda"
    assert header_language(b"#define LOG2_WARP_SIZE 5") == "cuda"
    assert header_language(b"#include <cutlass/gemm.h>") == "cuda"
    # device code behind a project's own qualifier macro
    assert header_language(b"LIB_DEVICE void f(int* s) { s[0] = 1; __syncthreads(); }") == "cuda"
    assert header_language(b"#pragma once\nint add(int a, int b);\n") is None
    # a host/device portability header: __CUDA_ARCH__ alone, around a C++ fallback
    assert header_language(b"#ifdef __CUDA_ARCH__\n#define CLZ __clz\n#else\n#define CLZ __builtin_clz\n#endif\n") is None
    # a GPU toolkit's own header (installed or vendored) is not project code
    notice = b"/* NOTICE TO LICENSEE: ... (\"Licensed Deliverables\") ... */\n"
    assert header_language(notice + b"__device__ int f();") is None


def test_cxx_language_is_decided_by_content():
    assert language_of("ops/host.cpp") == CXX and language_of("x.cc") == CXX
    assert cxx_language(b"__global__ void k() {}") == "cuda"
    assert cxx_language(b"#include <cublasLt.h>\nint f();\n") == "cuda"
    assert cxx_language(b'#include "cudnn_frontend.h"\n') == "cuda"
    assert cxx_language(b"#include <vector>\nint f() { return 32; }\n") is None
    # a comment naming CUDA is not an include
    assert cxx_language(b"// ported from #include <cuda_runtime.h>\nint f();\n") is None


def test_a_header_named_on_stdin_is_linted_as_cuda_or_not_at_all():
    cuda = lint_one("__device__ int f(int v) { return __shfl_sync(0xffffffff, v, 0); }\n", "k.h")
    assert [f.code for f in cuda.findings] == ["PG501"]
    plain = lint_one("def looks_like_python(): pass\n", "plain.h")
    assert plain.findings == []


def test_the_same_guard_names_silence_both_branches_only():
    text = (CORPUS / "kernels" / "switches.cu").read_text()
    result = lint_one(text, "switches.cu")
    lines = {f.line for f in result.findings}
    assert lines == {55, 66}  # the unguarded loop and the unguarded mask


def test_salvage_keeps_line_numbers_and_marks_what_it_dropped():
    text = 'import os\nprint "x"\nif True:\n    print "y"\n    z = 1\n'
    fixed, blanked = blank_bad_lines(text)
    assert blanked == {2, 4}
    assert fixed.splitlines() == ["import os", "pass", "if True:", "    pass", "    z = 1"]
    ast.parse(fixed)


def test_token_fallback_finds_cuda_strings_when_salvage_cannot():
    text = (
        "def f():\n"
        '    print "a"\n'
        '  k = "__global__ void k(float* x) { x[0] = __shfl_sync(0xffffffff, x[0], 0); }"\n'
    )
    assert blank_bad_lines(text) is None
    module = string_module(text)
    strings = [
        n for n in ast.walk(module) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    assert [(s.lineno, s.col_offset) for s in strings] == [(2, 10), (3, 6)]
    found = lint_one(text, "broken.py")
    assert sorted(f.code for f in found.findings) == ["PG501", "PG901"]
    assert [f.line for f in found.findings if f.code == "PG501"] == [3]


def test_prose_about_cuda_is_not_a_kernel():
    text = 'HELP = "threadIdx.x & 31 gives the lane on NVIDIA GPUs"\n'
    assert lint_one(text, "doc.py").findings == []


def test_guard_macros_from_config_reach_headers(tmp_path):
    header = tmp_path / "k.h"
    header.write_text("#ifdef PORTED\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n")
    plain = lint_paths([header], LintConfig(root=tmp_path, cache=False, jobs=1))
    assert [f.code for f in plain.findings] == ["PG508"]
    ported = LintConfig(root=tmp_path, cache=False, jobs=1, guard_macros=("PORTED",))
    assert isinstance(ported.settings(), LintSettings)
    assert lint_paths([header], ported).findings == []
