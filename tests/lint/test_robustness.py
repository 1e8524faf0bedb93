"""Odd sources never crash a run: each file gets findings, a PG9xx diagnostic,
or nothing, and the positions stay sane. Uses the real catalogue and
whatever checkers are installed, so it also shakes the checkers."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portagpu.lint.config import LintConfig
from portagpu.lint.engine import lint_paths

GPU_LINES = [
    "import torch\n",
    "torch.cuda.synchronize()\n",
    "x = x.cuda()\n",
    'dev = torch.device("cuda:0")\n',
    'src = r"""__global__ void k(float* v) { v[0] = __shfl_down_sync(0xffffffff, v[0], 1); }"""\n',
    "import cupy\nk = cupy.RawKernel(src, 'k')\n",
    "@triton.jit\ndef k(X, BLOCK: tl.constexpr):\n    pass\nk[(1,)](x, num_warps=32)\n",
    "import pynvml\npynvml.nvmlInit()\n",
]
PY2 = ["print 'hello'\n", "print >>sys.stderr, 'x'\n", "exec 'code'\n", "raise E, 'msg'\n", "x = 0777\n", "def f((a, b)):\n    pass\n"]


def _nested(n: int) -> str:
    return "x = " + "(" * n + "1" + ")" * n + "\n"


def _long_chain(n: int) -> str:
    return "y = " + "1 + " * n + "1\n"


def _deep_blocks(n: int) -> str:
    return "".join("    " * i + "if x:\n" for i in range(n)) + "    " * n + "torch.cuda.synchronize()\n"


odd_text = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=400),
    st.sampled_from(PY2),
    st.integers(1, 400).map(_nested),
    st.integers(1, 60_000).map(_long_chain),
    st.integers(1, 120).map(_deep_blocks),
    st.sampled_from(["\ufeff", "\u2028", "\x0c", "\r", "\t\t", "é", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "a\u0301", "\\\n", '"""', "'''", "#", "\x1a"]),
)
source = st.lists(st.one_of(odd_text, st.sampled_from(GPU_LINES)), min_size=1, max_size=6).map("".join)
files = st.lists(
    st.tuples(
        st.sampled_from(["m.py", "k.cu", "h.cuh", "pkg/n.py"]),
        st.one_of(source.map(lambda s: s.encode("utf-8")), st.binary(max_size=600)),
    ),
    min_size=1,
    max_size=4,
    unique_by=lambda t: t[0],
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files)
def test_lint_paths_never_crashes(tree):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, data in tree:
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        config = LintConfig(root=root, cache=False, jobs=1)
        result = lint_paths([root], config)
        codes = {r.id for r in result.rules}
        assert result.files == len(tree)
        for finding in result.findings:
            assert finding.code in codes
            assert finding.line >= 1 and finding.col >= 1, finding
            assert finding.code != "PG907", f"a checker crashed: {finding.message}\n{tree}"
        by_file = {Path(f.path).name for f in result.findings if f.code == "PG904"}
        for name, data in tree:
            if b"\0" in data:
                assert Path(name).name in by_file


def _indent(block: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in block.splitlines(keepends=True))


statement = st.sampled_from(GPU_LINES[1:4] + ["x = 1\n", "y = compute(x)\n", '"""doc\ndef fake():\n    torch.cuda.x()\n"""\n', "return dev\n"])
function = st.tuples(st.sampled_from(["f", "g", "cuda_helper", "h"]), st.lists(statement, min_size=1, max_size=3)).map(
    lambda t: f"def {t[0]}():\n" + _indent("".join(t[1]), "    ")
)
klass = st.tuples(st.sampled_from(["Plain", "CudaThing"]), st.lists(function, min_size=1, max_size=3)).map(
    lambda t: f"class {t[0]}(Base):\n" + _indent("\n".join(t[1]), "    ")
)
module = st.lists(st.one_of(function, klass, st.sampled_from(GPU_LINES[:4] + ["from torch.cuda import synchronize as sync\n", "dev = 'cuda'\n"])), min_size=1, max_size=8).map(
    lambda parts: "import torch\n" + "\n".join(parts)
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(module)
def test_narrowing_never_changes_findings(text):
    import pytest

    from portagpu.lint import dispatch, engine

    if not engine.checker_available("python"):
        pytest.skip("the Python checkers are not in the tree yet")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "m.py").write_text(text)
        config = LintConfig(root=root, cache=False, jobs=1)
        from portagpu.lint import narrow

        saved = dispatch.NARROW, narrow.MIN_SAVING
        try:
            dispatch.NARROW, narrow.MIN_SAVING = True, 0.0  # narrow whatever can be
            narrowed = lint_paths([root], config).findings
            dispatch.NARROW = False
            full = lint_paths([root], config).findings
        finally:
            dispatch.NARROW, narrow.MIN_SAVING = saved
        assert narrowed == full, text
