"""Every PG5xx/PG6xx rule, positive and negative: the catalogue's own examples,
and a corpus whose expected findings are marked `// expect: PGnnn` in place."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from portagpu.lint.cuda import check_cuda_file
from portagpu.lint.model import LintSettings, ParseFailure

_spec = importlib.util.spec_from_file_location("cuda_test_helpers", __file__.replace(
    "test_rules.py", "_helpers.py"))
helpers = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("cuda_test_helpers", helpers)
_spec.loader.exec_module(helpers)

SETTINGS = LintSettings()
CUDA_RULES = [r for r in helpers.cuda_catalogue() if r.language == "cuda"]


def _codes(text: str, rules, settings=SETTINGS) -> list[str]:
    return [f.code for f in check_cuda_file("example.cu", text, rules, settings)]


def test_catalogue_has_every_family_and_rules_have_examples_and_tokens():
    ids = {r.id for r in helpers.cuda_catalogue()}
    assert {f"PG50{i}" for i in range(1, 10)} <= ids
    assert {f"PG6{i:02d}" for i in range(1, 11)} <= ids
    for rule in helpers.cuda_catalogue():
        assert rule.invalid and rule.valid, rule.id
        assert rule.tokens, rule.id
        assert rule.targets == ("rocm",), rule.id


@pytest.mark.parametrize("rule", CUDA_RULES, ids=lambda r: r.id)
def test_invalid_examples_trigger(rule):
    for example in rule.invalid:
        assert rule.id in _codes(example.code, [rule]), example.code
        assert any(token in example.code for token in rule.tokens), (
            f"{rule.id}: tokens {rule.tokens} miss {example.code!r}")


@pytest.mark.parametrize("rule", CUDA_RULES, ids=lambda r: r.id)
def test_valid_examples_do_not_trigger(rule):
    for example in rule.valid:
        assert rule.id not in _codes(example.code, CUDA_RULES), example.code


@pytest.mark.parametrize("name", sorted(p.name for p in helpers.CORPUS.glob("*.cu")))
def test_corpus_findings_match_expect_markers(name):
    text = (helpers.CORPUS / name).read_text(encoding="utf-8")
    found = {(f.line, f.code) for f in check_cuda_file(name, text, CUDA_RULES, SETTINGS)}
    assert found == helpers.expected_findings(text)


def test_guard_macros_from_settings_silence_project_switches():
    # a switch not spelled like one (no HIP/ROCM/AMD word): only config names it
    text = "#ifdef PORTED_BUILD\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n"
    assert _codes(text, CUDA_RULES) == ["PG508"]
    assert _codes(text, CUDA_RULES, LintSettings(guard_macros=("PORTED_BUILD",))) == []


@pytest.mark.parametrize(
    "condition",
    [
        "#ifdef MY_PROJECT_AMD",
        "#if BNB_HIP",
        "#ifdef MMCV_WITH_HIP",
        "#if defined(GGML_USE_HIP) && defined(__GFX9__)",
        "#ifndef TENSORFLOW_USE_ROCM",
        "#if __AMDGCN_WAVEFRONT_SIZE == 64",
        "#if WARP_SIZE == 64",
        "#if defined(__gfx90a__) || defined(__gfx942__)",
    ],
)
def test_macros_spelled_like_vendor_switches_are_switches(condition):
    text = f"{condition}\n#define LANES 64\n#else\n#define WARP_SIZE 32\n#endif\n"
    assert _codes(text, CUDA_RULES) == []


@pytest.mark.parametrize("condition", ["#ifdef _M_AMD64", "#if defined(USE_HIPBLASLT)", "#if CUDA_VERSION >= 9000"])
def test_other_conditions_are_not_vendor_switches(condition):
    text = f"{condition}\n#define LANES 64\n#else\n#define WARP_SIZE 32\n#endif\n"
    assert _codes(text, CUDA_RULES) == ["PG508"]


def test_a_macro_defined_only_under_a_switch_is_a_switch():
    text = (
        "#if !defined(GGML_USE_HIP) && __CUDA_ARCH__ >= 800\n#define HAVE_CP_ASYNC\n#endif\n"
        "__device__ void f() {\n#ifdef HAVE_CP_ASYNC\n  asm volatile(\"cp.async.commit_group;\" ::);\n#endif\n}\n"
        "__device__ void g() { asm(\"trap;\"); }\n"
    )
    assert _codes(text, CUDA_RULES) == ["PG601"]


def test_guard_survives_a_conditional_that_splits_a_statement():
    text = """__global__ void k(float* x) {
#if defined(__HIP_PLATFORM_AMD__)
  if (threadIdx.x % 64 == 0) {
#else
  if ((threadIdx.x & 31) == 0 && __shfl_sync(0xffffffff, x[0], 0) > 0) {
#endif
    x[0] = 1;
  }
}
"""
    assert _codes(text, CUDA_RULES) == []


def test_positions_are_one_based_and_fix_covers_the_literal():
    text = "__device__ float f(float v) {\n  return __shfl_xor_sync(0xffffffff, v, 1);\n}\n"
    (finding,) = check_cuda_file("k.cu", text, CUDA_RULES, SETTINGS)
    assert (finding.line, finding.col, finding.end_line, finding.end_col) == (2, 26, 2, 36)
    assert finding.fix is not None and finding.fix.edits[0].content == "~0ull"
    line = text.splitlines()[1]
    assert line[finding.col - 1:finding.end_col - 1] == "0xffffffff"


def test_columns_count_characters_not_bytes():
    text = '// é ü\n__device__ float f(float v) { /* ü */ return __shfl_down_sync(~0u, v, 1); }\n'
    (finding,) = check_cuda_file("k.cu", text, CUDA_RULES, SETTINGS)
    line = text.splitlines()[1]
    assert line[finding.col - 1:finding.end_col - 1] == "~0u"


def test_mask_macro_is_reported_once_at_its_definition():
    text = ("#define FULL 0xffffffffu\n"
            "__device__ float f(float v) {\n"
            "  v += __shfl_down_sync(FULL, v, 2);\n  v += __shfl_down_sync(FULL, v, 1);\n"
            "  return v;\n}\n")
    findings = check_cuda_file("k.cu", text, CUDA_RULES, SETTINGS)
    assert [(f.line, f.code) for f in findings] == [(1, "PG501")]


def test_only_selected_rules_run():
    text = "#define WARP_SIZE 32\n__device__ void f() { asm(\"trap;\"); }\n"
    only_ptx = [r for r in CUDA_RULES if r.id == "PG601"]
    assert _codes(text, only_ptx) == ["PG601"]
    assert _codes(text, []) == []


def test_mostly_unparseable_text_is_a_parse_failure():
    with pytest.raises(ParseFailure) as info:
        check_cuda_file("junk.cu", "}}}} ))) ((( {{{{ @@@ ### $$$ \n" * 5, CUDA_RULES, SETTINGS)
    assert info.value.line >= 1


def test_local_syntax_error_leaves_the_rest_checked():
    text = "int broken( = ;\n#define WARP_SIZE 32\n" + "__device__ int ok(int x) { return x; }\n" * 5
    assert "PG508" in _codes(text, CUDA_RULES)


# Shaped like torch's ATen/cuda/detail/IntegerDivider.cuh: a file-wide #if with
# an #else #error, a macro attribute, and an #if/#else inside a function that
# declares `t` in both branches.
FILE_WIDE_IF = (
    "#if !defined(ONLY_STABLE)\n#pragma once\n"
    + "// a long explanation of the algorithm\n" * 40
    + """namespace lib::detail {
template <typename T>
struct Divider {
  HOST_DEVICE inline unsigned div(unsigned n) const {
#if defined(__CUDA_ARCH__)
    unsigned t = __umulhi(n, m);
    return (t + n) >> s;
#else
    unsigned long long t = ((unsigned long long) n * m) >> 32;
    return (t + n) >> s;
#endif
  }
  unsigned m, s;
};
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}
#if defined(__HIP_PLATFORM_AMD__)
__device__ unsigned lane() { return threadIdx.x & 31; }
#endif
}  // namespace lib::detail
#else
#error "not with ONLY_STABLE"
#endif
"""
)


def test_file_wide_conditional_is_parsed_and_checked():
    # Findings inside a file-wide conditional keep their lines, and the
    # HIP-guarded block inside stays exempt.
    findings = check_cuda_file("f.cuh", FILE_WIDE_IF, CUDA_RULES, SETTINGS)
    by_code = {f.code: f.line for f in findings}
    assert by_code.get("PG505") == 58 and by_code.get("PG501") == 59
    assert "PG504" not in by_code


def test_torch_integer_divider_header_is_checked_not_unparseable():
    # Regression: torch's own header, which tree-sitter cannot structure as
    # written (its ERROR node swallowed the whole file, comments included).
    torch = pytest.importorskip("torch")
    from pathlib import Path

    header = Path(torch.__file__).parent / "include/ATen/cuda/detail/IntegerDivider.cuh"
    if not header.is_file():
        pytest.skip("this torch build ships no CUDA headers")
    findings = check_cuda_file(str(header), header.read_text(), CUDA_RULES, SETTINGS)
    assert [f for f in findings if f.code == "PG901"] == []


def test_nested_switches_give_disjoint_guard_spans():
    from portagpu.cuda.unit import guarded_spans

    text = (
        "#ifndef MY_WIDTH\n#if defined(USE_ROCM)\n#define MY_WIDTH 64\n#else\n#define MY_WIDTH 32\n#endif\n#endif\n"
        "int x;\n#ifdef __HIPCC__\nint y;\n#endif\n"
    )
    spans = guarded_spans(text, ())
    assert spans == sorted(spans)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert len(spans) == 2  # the MY_WIDTH chain (a derived switch) holds the USE_ROCM one
