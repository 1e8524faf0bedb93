"""A generator of Python and CUDA files with odd characters (form feed,
U+2028, U+0085, vertical tab, BOM, combining marks), mixed line endings and
encodings (UTF-8, UTF-8 with BOM, latin-1/cp1252 with a coding cookie),
with fixable idioms among them. For every file:

  --fix (Python: safe fixes; CUDA: --unsafe-fixes, its fixes are suggestions)
    * the result still parses, in the same encoding, BOM kept;
    * a second run changes nothing;
    * the syntax tree is the original's outside the fixed nodes.
  --add-noqa
    * the syntax tree is unchanged (comments only), nothing is left to report,
      a second run adds nothing.

Examples per test: PORTAGPU_FUZZ_EXAMPLES (default small, for CI); docs/
robustness.md gives the counts of a long run."""

from __future__ import annotations

import ast
import codecs
import os
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from portagpu.cuda.parser import parse as parse_cuda
from portagpu.lint.config import LintConfig
from portagpu.lint.engine import lint_paths
from portagpu.lint.meta import META_CODES

EXAMPLES = int(os.environ.get("PORTAGPU_FUZZ_EXAMPLES", "40"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

# characters Python keeps inside a line that str.splitlines() breaks at, and other oddities
ODD = [
    "\x0c",
    "\x0b",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x85",
    "\u2028",
    "\u2029",
    "é",
    "\U0001d518",
    "a\u0301",
    "\t",
    "\ufeff",
]

PY_FIXABLE = [
    "ctx = torch.cuda.amp.autocast()",
    "with torch.cuda.amp.autocast(enabled=True):\n    y = 1",
    "def step(model, x, device):\n    return model(x.cuda())",
    "def step(x, device):\n    y = x.to('cuda')\n    return y.cuda(non_blocking=True)",
    "@torch.cuda.amp.autocast()\ndef fwd(x):\n    return x",
    "class Net:\n    def go(self, x, device):\n        return x.cuda()",
]
PY_OTHER = [
    "scaler = torch.cuda.amp.GradScaler()",  # a suggestion (needs torch 2.3+): left alone by --fix
    "torch.cuda.synchronize()",
    "n = torch.cuda.device_count()",
    "d = torch.device('cuda')",
    "x = 1",
    "def helper():\n    return 2",
    "y = 1 + \\\n    2",
    "values = [\n    1,\n    2,\n]",
    's = """multi\nline {odd}\nstring"""',
    "t = 'a{odd}b'",
    "# {odd} comment",
    "{ff}",
    "k = cupy.RawKernel(r'''\n__global__ void k(float* v) {{ v[0] = __shfl_down_sync(0xffffffff, v[0], 1); }}\n''', 'k')",
]


def _fill(chunk: str, odd: str) -> str:
    return chunk.replace("{odd}", odd).replace("{ff}", "\x0c")


@st.composite
def python_files(draw) -> tuple[bytes, str]:
    """(the file's bytes, the codec it is written in)."""
    chunks = draw(st.lists(st.sampled_from(PY_FIXABLE + PY_OTHER), min_size=1, max_size=8))
    odds = draw(st.lists(st.sampled_from(ODD), min_size=len(chunks), max_size=len(chunks)))
    text = (
        "import torch\nimport cupy\n"
        + "\n".join(_fill(c, o) for c, o in zip(chunks, odds, strict=True))
        + "\n"
    )
    if draw(st.booleans()):  # a form feed at the start of a line: a page break
        lines = text.split("\n")
        at = draw(st.integers(2, len(lines) - 1))
        lines[at] = "\x0c" + lines[at]
        text = "\n".join(lines)
    newline = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    if newline == "mixed":
        parts = text.split("\n")
        ends = draw(
            st.lists(
                st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(parts), max_size=len(parts)
            )
        )
        text = "".join(p + e for p, e in zip(parts[:-1], ends, strict=False)) + parts[-1]
    else:
        text = text.replace("\n", newline)
    codec = draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "cp1252"]))
    if codec in ("latin-1", "cp1252"):
        text = f"# -*- coding: {codec} -*-\n" + text
    try:
        data = text.encode(codec)
    except UnicodeEncodeError:
        data, codec = text.encode("utf-8"), "utf-8"
    return data, codec


CUDA_CHUNKS = [
    "__global__ void k{i}(float* v, int n) {{\n"
    "    float x = v[threadIdx.x]; // {odd}\n"
    "    for (int o = 16; o > 0; o /= 2) x += __shfl_down_sync(0xffffffff, x, o);\n"
    "    unsigned m = __ballot_sync(0xffffffff, x > 0);\n"
    "    v[threadIdx.x] = x + m;\n"
    "}}",
    "#define RED{i}(v) \\\n    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);",
    "/* {odd} block\n   comment */",
    "#if defined(__HIP_PLATFORM_AMD__)\n__device__ int lanes{i}() {{ return 64; }}\n#else\n"
    "__device__ int lanes{i}() {{ return __popc(__ballot_sync(0xffffffff, 1)); }}\n#endif",
    "__device__ int lane{i}() {{ return threadIdx.x % 32; }}",
    "// {odd}",
    "int plain{i} = 3;",
]


@st.composite
def cuda_files(draw) -> bytes:
    chunks = draw(st.lists(st.sampled_from(CUDA_CHUNKS), min_size=1, max_size=6))
    odds = draw(
        st.lists(
            st.sampled_from([o for o in ODD if o != "\ufeff"]),
            min_size=len(chunks),
            max_size=len(chunks),
        )
    )
    text = (
        "\n".join(c.format(i=i, odd=o) for i, (c, o) in enumerate(zip(chunks, odds, strict=True)))
        + "\n"
    )
    text = text.replace("\n", draw(st.sampled_from(["\n", "\r\n", "\r"])))
    data = text.encode("utf-8")
    return codecs.BOM_UTF8 + data if draw(st.booleans()) else data


# --- comparing trees --------------------------------------------------------------------


class _Normalise(ast.NodeTransformer):
    """The two forms of each safely fixed idiom made one: `x.cuda()`,
    `x.to("cuda")` and `x.to(device)`; `torch.cuda.amp.X(...)` and
    `torch.amp.X("cuda", ...)`."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        dotted = ast.unparse(node)
        if dotted.startswith(("torch.cuda.amp.", "torch.amp.")):
            return ast.Name(id="__amp__" + node.attr, ctx=ast.Load())
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id.startswith("__amp__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and first.value == "cuda":
                node.args = node.args[1:]
        if isinstance(func, ast.Attribute) and (
            (func.attr == "cuda" and not node.args)
            or (
                func.attr == "to"
                and len(node.args) == 1
                and (
                    (isinstance(node.args[0], ast.Constant) and node.args[0].value == "cuda")
                    or (isinstance(node.args[0], ast.Name) and node.args[0].id == "device")
                )
            )
        ):
            return ast.Call(
                ast.Name(id="__to_device__", ctx=ast.Load()), [func.value], node.keywords
            )
        return node


def _py_tree(text: str, normalise: bool) -> str:
    tree = ast.parse(text)
    if normalise:
        tree = _Normalise().visit(tree)
    return ast.dump(tree, include_attributes=False)


# C tokens, comments and line continuations dropped: two texts with the same
# tokens parse the same (a tree comparison would also see tree-sitter's error
# recovery move around in code it cannot parse)
_C_TOKEN = re.compile(
    r"""(?P<comment>//[^\r\n]*|/\*.*?\*/)"""
    r"""|(?P<string>"(?:\\.|[^"\\\r\n])*"|'(?:\\.|[^'\\\r\n])*')"""
    r"""|(?P<skip>\\(?:\r\n|\r|\n)|\s+)"""
    r"""|(?P<token>[A-Za-z_]\w*|\d[\w.]*|\S)""",
    re.S,
)
# the lane-mask fix (PG501) rewrites the first argument of a *_sync call
_SYNC_MASK = re.compile(r"(__\w+_sync\s*\()[^,()]*(?:\([^()]*\))?[^,()]*,")


def _cuda_tree(data: bytes) -> list[str]:
    text = _SYNC_MASK.sub(r"\1MASK,", data.decode("utf-8-sig"))
    return [m.group() for m in _C_TOKEN.finditer(text) if m.lastgroup in ("string", "token")]


def _cuda_errors(data: bytes) -> int:
    from portagpu.cuda.parser import error_spans

    return len(error_spans(parse_cuda(data.decode("utf-8-sig"))))


# --- running ----------------------------------------------------------------------------


def _run(folder: Path, name: str, data: bytes, **kwargs) -> tuple[bytes, object]:
    path = folder / name
    path.write_bytes(data)
    config = LintConfig(root=folder, cache=False, jobs=1, extend_select=())
    result = lint_paths([path], config, **kwargs)
    return path.read_bytes(), result


def _decode(data: bytes, codec: str) -> str:
    return data.decode(codec)


def _py_tree_or_skip(text: str, normalise: bool) -> str:
    try:
        return _py_tree(text, normalise)
    except SyntaxError:
        assume(False)  # the generator made something that is not Python 3: draw again
        raise


def _left_after_noqa(folder: Path, name: str) -> list:
    """What a plain lint still reports once --add-noqa has run (PG9xx apart)."""
    config = LintConfig(root=folder, cache=False, jobs=1)
    return [f for f in lint_paths([folder / name], config).findings if f.code not in META_CODES]


@SETTINGS
@given(python_files())
def test_python_fix_parses_is_idempotent_and_changes_only_fixed_nodes(case):
    data, codec = case
    text = _decode(data, codec)
    before = _py_tree_or_skip(text, normalise=True)
    with tempfile.TemporaryDirectory() as tmp:
        fixed, result = _run(Path(tmp), "m.py", data, fix=True)
        assert not result.errors, result.errors
        assert fixed.startswith(codecs.BOM_UTF8) == data.startswith(codecs.BOM_UTF8)
        new_text = _decode(fixed, codec)  # same encoding, or this raises
        assert _py_tree(new_text, normalise=True) == before, f"{text!r}\n--->\n{new_text!r}"
        again, second = _run(Path(tmp), "m.py", fixed, fix=True)
        assert again == fixed and second.fixed == 0, "a second --fix changed the file"
        if result.fixed:
            assert fixed != data


@SETTINGS
@given(python_files())
def test_python_add_noqa_changes_comments_only_and_silences_everything(case):
    data, codec = case
    text = _decode(data, codec)
    before = _py_tree_or_skip(text, normalise=False)
    with tempfile.TemporaryDirectory() as tmp:
        noqa, result = _run(Path(tmp), "m.py", data, add_noqa_comments=True)
        assert not result.errors, result.errors
        new_text = _decode(noqa, codec)
        assert _py_tree(new_text, normalise=False) == before, f"{text!r}\n--->\n{new_text!r}"
        again, second = _run(Path(tmp), "m.py", noqa, add_noqa_comments=True)
        assert again == noqa and second.noqa_added == 0
        assert _left_after_noqa(Path(tmp), "m.py") == []


@SETTINGS
@given(cuda_files())
def test_cuda_fix_parses_is_idempotent_and_changes_only_fixed_nodes(data):
    with tempfile.TemporaryDirectory() as tmp:
        fixed, result = _run(Path(tmp), "k.cu", data, fix=True, unsafe_fixes=True)
        assert not result.errors, result.errors
        assert fixed.startswith(codecs.BOM_UTF8) == data.startswith(codecs.BOM_UTF8)
        assert _cuda_errors(fixed) <= _cuda_errors(data)
        assert _cuda_tree(fixed) == _cuda_tree(data), f"{data!r}\n--->\n{fixed!r}"
        assert fixed.count(b"\\") == data.count(b"\\")  # no macro continuation lost
        again, _ = _run(Path(tmp), "k.cu", fixed, fix=True, unsafe_fixes=True)
        assert again == fixed


@SETTINGS
@given(cuda_files())
def test_cuda_add_noqa_changes_comments_only_and_silences_everything(data):
    with tempfile.TemporaryDirectory() as tmp:
        noqa, result = _run(Path(tmp), "k.cu", data, add_noqa_comments=True)
        assert not result.errors, result.errors
        assert _cuda_tree(noqa) == _cuda_tree(data), f"{data!r}\n--->\n{noqa!r}"
        again, second = _run(Path(tmp), "k.cu", noqa, add_noqa_comments=True)
        assert again == noqa and second.noqa_added == 0
        assert _left_after_noqa(Path(tmp), "k.cu") == []
