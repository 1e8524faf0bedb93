"""CUDA inside Python: every finding lands on the Python file's own line and
column, through escapes, prefixes, concatenation, names, %, .format and f-strings."""

from __future__ import annotations

import ast
import importlib.util
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from portagpu.lint.cuda import check_embedded
from portagpu.lint.model import LintSettings

_spec = importlib.util.spec_from_file_location(
    "cuda_test_helpers", __file__.replace("test_embedded.py", "_helpers.py"))
helpers = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("cuda_test_helpers", helpers)
_spec.loader.exec_module(helpers)

RULES = list(helpers.cuda_catalogue())


def _check(text: str, settings: LintSettings | None = None):
    return check_embedded("m.py", text, ast.parse(text), RULES, settings or LintSettings())


def test_corpus_module_findings_at_python_lines():
    text = (helpers.CORPUS / "embedded_kernels.py").read_text(encoding="utf-8")
    expected = helpers.expected_findings(text)
    # the RawModule literal's findings are on its own lines, named in a comment below it
    note = next(i for i, line in enumerate(text.splitlines(), 1) if "expect on lines above" in line)
    expected -= {(note, "PG604"), (note, "PG601")}
    expected |= {(note - 2, "PG604"), (note - 1, "PG601")}
    found = {(f.line, f.code) for f in _check(text)}
    assert found == expected


def test_column_maps_through_escapes_in_a_plain_literal():
    text = ('import cupy\n'
            'k = cupy.RawKernel("__device__ float f(float v) {\\n\\t'
            'return __shfl_down_sync(0xffffffff, v, 1); }", "f")\n')
    (finding,) = _check(text)
    line = text.splitlines()[finding.line - 1]
    assert finding.line == 2
    assert line[finding.col - 1:finding.end_col - 1] == "0xffffffff"


def test_implicit_concatenation_and_raw_prefix():
    text = ('import cupy\n'
            'k = cupy.RawKernel(\n'
            '    r"__device__ float f(float v) {\\n"  # a comment between parts\n'
            '    ("" if fast else "  return __shfl_down_sync(~0u, v, 1); }"),\n'
            '    "f")\n')
    # a conditional expression is not a literal: the kernel source is unknown
    # (PG699); its second branch is plainly CUDA on its own and checked as such
    findings = _check(text)
    assert {(f.code, f.line) for f in findings if f.code != "PG699"} == {("PG501", 4)}
    text = ('import cupy\n'
            'k = cupy.RawKernel(\n'
            '    r"__device__ float f(float v) {"  # comment\n'
            '    "  return __shfl_down_sync(~0u, v, 1); }",\n'
            '    "f")\n')
    (finding,) = _check(text)
    line = text.splitlines()[finding.line - 1]
    assert (finding.line, line[finding.col - 1:finding.end_col - 1]) == (4, "~0u")


def test_format_with_known_values_is_checked():
    text = ('import cupy\nWS = 32\n'
            'k = cupy.RawKernel("#define WARP_SIZE {}\\n__global__ void k() {{}}".format(WS), "k")\n')
    codes = [f.code for f in _check(text)]
    assert codes == ["PG508"]


def test_fstring_unknown_parts_are_named_not_guessed():
    text = ('import cupy\n'
            'def make(t, n):\n'
            '    return cupy.RawKernel(f"__global__ void k({t}* x) {{ x[0] = __shfl_sync('
            '0xffffffff, x[{n}], 0); }}", "k")\n')
    findings = _check(text)
    assert sorted(f.code for f in findings) == ["PG501", "PG699"]
    unknown = next(f for f in findings if f.code == "PG699")
    assert "`t`" in unknown.message and "`n`" in unknown.message
    assert text.splitlines()[2][unknown.col - 1] == "{"


def test_source_read_at_run_time_is_reported_as_not_checkable():
    text = "import cupy\nk = cupy.RawKernel(open('k.cu').read(), 'k')\n"
    (finding,) = _check(text)
    assert finding.code == "PG699" and finding.severity == "info"


def test_python_hip_branch_and_settings_guard_names_are_respected():
    body = 'cupy.RawKernel("__device__ int f(int p) { return __any_sync(0xffffffff, p); }", "f")'
    assert _check(f"import cupy, torch\nif torch.version.hip:\n    {body}\n") == []
    assert _check(f"import cupy\nif on_amd():\n    {body}\n",
                  LintSettings(guard_names=("on_amd",))) == []
    assert [f.code for f in _check(f"import cupy\nif on_amd():\n    {body}\n")] == ["PG501"]


def test_non_ascii_before_the_literal_counts_characters():
    text = ('import cupy\n'
            'k = {"ü": cupy.RawKernel("__device__ int f(int p) { return __all_sync(~0u, p); }", "f")}\n')
    (finding,) = _check(text)
    line = text.splitlines()[1]
    assert line[finding.col - 1:finding.end_col - 1] == "~0u"


def test_non_cuda_rules_and_files_without_kernels_cost_nothing():
    assert check_embedded("m.py", "x = 1\n", ast.parse("x = 1\n"), RULES, LintSettings()) == []
    python_only = [r for r in RULES if r.language == "python"]
    text = 'import cupy\nk = cupy.RawKernel("#define WARP_SIZE 32\\n", "k")\n'
    assert check_embedded("m.py", text, ast.parse(text), python_only, LintSettings()) == []


def test_suppression_comment_lines_are_the_python_lines():
    # the engine applies a noqa comment by line: the finding must be on the call's line
    text = ('import cupy\n'
            'k = cupy.RawKernel("__device__ int f(int p) { return __all_sync(~0u, p); }", "f")'
            '  # ' + 'noqa: PG501\n')
    (finding,) = _check(text)
    assert finding.line == 2 and "PG501" in text.splitlines()[1]



_PIECES = ["a", " ", "\t", "é", "漢", "\n", "\\n", "\\\\", "\\x41", "\\101", "\\N{BULLET}", "\\\n", "'", '"', "#"]


@given(
    st.lists(st.sampled_from(_PIECES), max_size=12),
    st.sampled_from(["", "r", "u", "R"]),
    st.sampled_from(["\'\'\'", '"""', "'", '"']),
)
@settings(max_examples=300, deadline=None)
def test_literal_text_is_the_value_and_each_character_sits_where_it_is_written(pieces, prefix, quote):
    """A literal's mapped text is the value Python gives it, and each of its
    characters points at where it is spelled: at itself, or at the
    backslash of the escape that spells it."""
    from portagpu.cuda.pystrings import literal
    from portagpu.lines import split_lines

    source = f"x = 1\ny = {prefix}{quote}{''.join(pieces)}{quote}\n"
    try:
        node = ast.parse(source).body[1].value
    except SyntaxError:
        return
    lines = split_lines(source, keepends=True)
    mapped = literal(lines, node)
    assert mapped is not None and mapped.text == node.value
    for char, (line, col) in zip(mapped.text, mapped.pos, strict=True):
        assert lines[line - 1][col - 1] in (char, "\\"), (char, line, col)
