"""Classes of problem the fuzz suite and real code (facts in
docs/robustness.md) found beyond the issue's list, each written from scratch."""

from __future__ import annotations

from portagpu.hipify_bridge import translate


def test_fix_in_a_file_libcst_cannot_parse_anyway(lint_tree, tmp_path):
    """A form feed inside an indentation is valid Python that libcst refuses;
    the fix is not to blame, so it is applied (ast still checks it)."""
    text = "import torch\nclass Net:\n\x0c    def go(self, x, device):\n        return x.cuda()\n"
    result = lint_tree({"m.py": text}, fix=True)
    assert result.errors == [] and result.fixed == 1
    assert (tmp_path / "m.py").read_text() == text.replace("x.cuda()", "x.to(device)")


def test_fix_that_breaks_libcst_is_still_refused(lint_tree):
    from portagpu.lint.fixes import UnsafeFix, check_parses

    try:
        check_parses("x = (1,\n", "m.py", "python", "x = 1\n")
    except UnsafeFix:
        return
    raise AssertionError("a fix that does not parse was accepted")


MASK_VARIABLE = """\
constexpr unsigned FINAL_MASK = 0xffffffff;
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FINAL_MASK, v, o);
    return v;
}
"""


def test_a_32_bit_mask_variable_gets_no_edit_that_would_be_cut_back(lint_tree):
    """`unsigned FINAL_MASK = ~0ull` is still 0xffffffff: the lint suggestion
    offers no edit there (hipify widens the declaration instead)."""
    result = lint_tree({"k.cu": MASK_VARIABLE})
    (mask,) = [f for f in result.findings if f.code == "PG501"]
    assert mask.line == 1 and (mask.fix is None or not mask.fix.edits)
    hip = translate(MASK_VARIABLE, engine="builtin", header="none").text
    assert "unsigned long long FINAL_MASK = PORTAGPU_FULL_MASK" in hip


def test_a_64_bit_mask_variable_keeps_its_edit(lint_tree):
    result = lint_tree(
        {"k.cu": MASK_VARIABLE.replace("constexpr unsigned", "constexpr unsigned long long")}
    )
    (mask,) = [f for f in result.findings if f.code == "PG501"]
    assert mask.fix is not None and mask.fix.edits[0].content == "~0ull"


def test_noqa_between_the_pieces_of_a_multi_line_asm_string(lint_tree, tmp_path):
    text = (
        "__device__ void f(unsigned* p, unsigned v) {\n"
        '    asm volatile("atom.add.release.gpu.u32 %0,[%1],%2;"\n'
        '                 : "=r"(v) : "l"(p), "r"(v));\n'
        "}\n"
    )
    result = lint_tree({"a.cu": text}, add_noqa_comments=True)
    assert result.noqa_added == 1
    assert lint_tree({"a.cu": (tmp_path / "a.cu").read_text()}).findings == []
