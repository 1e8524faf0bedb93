"""Issue 13 item 14: 32-lane code inside a function-like `#define` is seen by
lint (at its real line), converted by hipify (continuation lines kept), and
the compile check sees the converted macro."""

from __future__ import annotations

import shutil

import pytest
from portagpu.hipify_bridge import translate

from portagpu.cli import main

MACRO_CU = """\
#define WARP_REDUCE(v) \\
    for (int o = 16; o > 0; o /= 2) \\
        v += __shfl_down_sync(0xffffffff, v, o);
#define LANE_MASK(x) __ballot_sync(0xffffffff, (x))

__global__ void k(float* out, const float* in) {
    float v = in[threadIdx.x];
    WARP_REDUCE(v)
    if (threadIdx.x == 0) out[0] = v + LANE_MASK(v > 0);
}
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_lint_sees_macro_bodies(lint_tree, newline):
    result = lint_tree({"m.cu": MACRO_CU.replace("\n", newline)})
    found = sorted((f.code, f.line) for f in result.findings if f.code.startswith("PG5"))
    assert ("PG501", 3) in found and ("PG505", 2) in found and ("PG501", 4) in found, found


def test_lint_fix_in_a_macro_keeps_the_continuations(lint_tree, tmp_path):
    result = lint_tree({"m.cu": MACRO_CU}, fix=True, unsafe_fixes=True)
    text = (tmp_path / "m.cu").read_text()
    assert text.count("\\\n") == MACRO_CU.count("\\\n"), text
    assert result.errors == []


def test_hipify_converts_macro_bodies_and_keeps_continuations():
    out = translate(MACRO_CU, engine="builtin", header="none", diagnose=True)
    text = out.text
    assert "0xffffffff" not in text, text
    assert text.count("PORTAGPU_FULL_MASK") == 2
    assert "PORTAGPU_WARP_SIZE / 2" in text
    assert text.count("\\\n") == MACRO_CU.count("\\\n")
    assert {w["rule"] for w in out.report.warp_rewrites} >= {"PG501", "PG505"}


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="needs hipcc")
def test_check_compiles_the_converted_macro(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.cu").write_text(MACRO_CU)
    code = main(
        ["hipify", "m.cu", "--check", "--engine", "builtin", "--targets", "gfx90a", "--allow-skip"]
    )
    out = capsys.readouterr().out
    assert "check gfx90a: ok" in out, out
    assert code == 0
    hip = (tmp_path / "m.hip").read_text()
    assert "0xffffffff" not in hip
