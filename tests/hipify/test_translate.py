"""translate(): API renames by the engine, warp fixes hipify lacks, and a report
that lists every non-mechanical construct with its line."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from portagpu.hipify_bridge import translate
from portagpu.hipify_bridge.engines import EngineUnavailable, pick_engine

from portagpu.cuda.warp import FINDERS

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "cuda"
HAS_TORCH = importlib.util.find_spec("torch") is not None


def _body(text: str) -> str:
    """The translation without the inlined compat header."""
    return text.split("// end of portagpu_hip_compat.h\n", 1)[-1]


def _fixed(source: str) -> str:
    """The builtin engine's translation of `source`, warp fixes applied, header dropped."""
    return _body(translate(source, engine="builtin", diagnose=True).text)


@pytest.fixture(scope="module")
def reduce_source() -> str:
    return (CORPUS / "reduce_ballot_cub.cu").read_text(encoding="utf-8")


def test_warp_assumptions_are_rewritten(reduce_source):
    tr = translate(reduce_source, engine="builtin", diagnose=True)
    body = _body(tr.text)
    assert "0xffffffff" not in body
    assert "__popc(" not in body and "__popcll(votes)" in body
    assert "unsigned long long votes = __ballot_sync(PORTAGPU_FULL_MASK" in body
    assert "#define WARP_SIZE PORTAGPU_WARP_SIZE" in body
    assert "#define FULL_MASK PORTAGPU_FULL_MASK" in body
    assert "int offset = (PORTAGPU_WARP_SIZE / 2)" in body
    assert "partial[256 / PORTAGPU_WARP_SIZE]" in body
    assert "tid % PORTAGPU_WARP_SIZE" in body
    assert "(threadIdx.x & (PORTAGPU_WARP_SIZE - 1))" in body
    assert not re.search(r"[%/]\s*32\b|&\s*31\b", body)
    rules = sorted({w["rule"] for w in tr.report.warp_rewrites})
    assert rules == ["PG501", "PG503", "PG504", "PG505", "PG507", "PG508"]
    assert tr.report.header_inlined and "#ifndef PORTAGPU_HIP_COMPAT_H" in tr.text


def test_report_lines_point_at_the_original(reduce_source):
    tr = translate(reduce_source, engine="builtin", diagnose=True)
    lines = reduce_source.splitlines()
    for item in tr.report.warp_rewrites + tr.report.unconverted:
        original = lines[item["line"] - 1]
        assert item["before" if "before" in item else "construct"].split()[0] in original


def test_cub_is_renamed_and_reported_as_needing_hipcub(reduce_source):
    tr = translate(reduce_source, engine="builtin", diagnose=True)
    assert "hipcub::BlockReduce" in tr.text and "<hipcub/hipcub.hpp>" in tr.text
    assert tr.report.converted["cub::"] == 1
    assert tr.report.libraries == ["hipCUB"]
    assert [u["rule"] for u in tr.report.unconverted] == ["PG604"]


def test_ptx_mma_and_libraries_stay_and_are_reported_with_lines():
    source = (CORPUS / "ptx_mma_libs.cu").read_text(encoding="utf-8")
    tr = translate(source, engine="builtin", diagnose=True)
    assert 'asm volatile("mov.u32 %0, %%laneid;"' in tr.text  # left in place
    reported = {(u["line"], u["rule"]) for u in tr.report.unconverted}
    assert {(2, "PG602"), (5, "PG603"), (13, "PG601")} <= reported
    # the 32-thread tile is why tile_sum keeps 32-lane warps (its model, not a leftover)
    models = {m["function"]: m for m in tr.report.warp_models}
    assert models["tile_sum"]["model"] == "logical32"
    assert "tiled_partition<32>" in models["tile_sum"]["why"][0]
    # warpSize as an array bound in a native kernel becomes the per-target constant
    assert (25, "PG509") in {(w["line"], w["rule"]) for w in tr.report.warp_rewrites}
    assert {"hipBLAS", "hipRAND"} <= set(tr.report.libraries)
    # the 32-bit __activemask() store is mechanical: widened, not reported
    assert "unsigned long long active = __activemask()" in tr.text


def test_hip_guarded_code_is_left_untouched():
    source = (CORPUS / "guarded.cu").read_text(encoding="utf-8")
    tr = translate(source, engine="builtin", diagnose=True)
    assert tr.text == source  # nothing outside the guards needed a change
    assert tr.report.warp_rewrites == [] and tr.report.unconverted == []


def test_warp_size_can_be_pinned_for_run_time_compiles():
    src = '__global__ void k(int* x) { x[threadIdx.x & 31] = __ballot_sync(~0ull, 1) != 0; }'
    tr = translate(src, warp_size=64, engine="builtin")
    assert tr.text.startswith("#define PORTAGPU_WARP_SIZE 64\n")
    assert "threadIdx.x & (PORTAGPU_WARP_SIZE - 1)" in tr.text


def test_header_include_mode_and_pragma_once():
    src = "#pragma once\n__device__ int f(int p) { return __any_sync(0xffffffff, p); }\n"
    tr = translate(src, engine="builtin", header="include")
    assert tr.text.startswith('#pragma once\n#include "portagpu_hip_compat.h"\n')
    assert "__any_sync(PORTAGPU_FULL_MASK, p)" in tr.text


def test_engine_choice_is_reported_and_unknown_engine_is_an_error(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert pick_engine("auto") in ("torch", "builtin")
    with pytest.raises(EngineUnavailable):
        pick_engine("nope")
    with pytest.raises(EngineUnavailable, match="hipify-perl"):
        translate("__global__ void k() {}", engine="hipify-perl")


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_torch_tables_rename_runtime_api_including_a_name_at_the_very_start():
    src = "cudaMalloc(&p, 4);\ncudaMemcpy(p, q, 4, cudaMemcpyHostToDevice);\n"
    tr = translate(src, engine="torch")
    assert tr.engine == "torch"
    assert tr.text.startswith("hipMalloc(&p, 4);")  # the leading-token gotcha
    assert tr.report.converted == {"cudaMalloc": 1, "cudaMemcpy": 1,
                                   "cudaMemcpyHostToDevice": 1}
    assert tr.report.to_dict()["converted_refs"] == 3


def test_translate_is_fast_enough_for_run_time_use(reduce_source):
    # correctness of repeated use (the table/parser caches), not a timing assertion
    first = translate(reduce_source, engine="builtin").text
    assert translate(reduce_source, engine="builtin").text == first


def test_clz_of_a_ballot_is_reported_not_blindly_widened():
    src = ("__device__ int last(int p) {\n"
           "  unsigned long long b = __ballot_sync(~0ull, p);\n"
           "  return 31 - __clz(b);\n}\n")
    tr = translate(src, engine="builtin", diagnose=True)
    assert "31 - __clz(b)" in tr.text  # 63 - __clzll(b) would be the fix: a person's call
    assert [(u["line"], u["rule"]) for u in tr.report.unconverted] == [(3, "PG503")]


@pytest.mark.parametrize("name", ["reduce_ballot_cub.cu", "ptx_mma_libs.cu", "guarded.cu"])
def test_diagnostics_are_on_request_and_leave_the_text_alone(name):
    source = (CORPUS / name).read_text(encoding="utf-8")
    plain = translate(source, engine="builtin")
    diagnosed = translate(source, engine="builtin", diagnose=True)
    assert plain.text == diagnosed.text
    # without diagnose the rewrites are named by their finder, nothing else is reported
    assert [(w["line"], w["before"]) for w in plain.report.warp_rewrites] == [
        (w["line"], w["before"]) for w in diagnosed.report.warp_rewrites]
    assert {w["rule"] for w in plain.report.warp_rewrites} <= set(FINDERS)
    assert plain.report.unconverted == [] and plain.report.libraries == []


def test_a_fractional_warp_count_stays_fractional():
    # `blockDim.x / 32.f` counts a partial last warp: an integer warp width
    # there would drop it, so the rewrite keeps the division in float
    source = (
        "__device__ float f(const float* s, float v) {\n"
        "  int lane = threadIdx.x % warpSize;\n"
        "  return threadIdx.x < blockDim.x / 32.f ? s[lane] : v;\n"
        "}\n"
    )
    body = _fixed(source)
    assert "blockDim.x / ((float)PORTAGPU_WARP_SIZE)" in body
    assert "32.f" not in body


def test_a_mask_constant_used_only_in_macro_bodies_is_rewritten_and_widened():
    # the constant sits outside the macro bodies where its use was found:
    # the fix must still see its declaration and widen the 32-bit type
    source = (
        "const unsigned int kBits = 0xffffffff;\n"
        "#define HOP(M, v, o) v += __shfl_xor_sync(M, v, o)\n"
        "#define TWICE(v) HOP(kBits, v, 2); HOP(kBits, v, 1)\n"
        "__device__ float f(float v) { TWICE(v); return v; }\n"
    )
    body = _fixed(source)
    assert "const unsigned long long kBits = PORTAGPU_FULL_MASK;" in body


def test_a_mask_given_as_a_parameter_default_is_rewritten_and_widened():
    source = (
        "#define LANES 0xffffffffu\n"
        "__device__ int vote(int p, unsigned long long m = LANES) { return __any_sync(m, p); }\n"
        "__device__ float f(float v, unsigned m = 0xffffffff) { return __shfl_xor_sync(m, v, 1); }\n"
        "template <unsigned M = 0xffffffffu> __device__ int g(int p) { return __all_sync(M, p); }\n"
    )
    body = _fixed(source)
    assert "#define LANES PORTAGPU_FULL_MASK" in body
    assert "float f(float v, unsigned long long m = PORTAGPU_FULL_MASK)" in body
    assert "template <unsigned long long M = PORTAGPU_FULL_MASK>" in body
    assert "0xffffffff" not in body


def test_a_mask_returned_by_a_function_or_passed_through_a_wrapper_is_rewritten():
    source = (
        "__host__ __device__ constexpr unsigned int full_lanes() { return 0xffffffff; }\n"
        "__device__ int pull(int v, int src, unsigned m = 0xffffffffu) { return __shfl_sync(m, v, src); }\n"
        "__device__ float pull_f(float v, int src, unsigned m = 0xffffffffu)"
        " { return __int_as_float(pull(__float_as_int(v), src, m)); }\n"
        "__device__ int f(int v) { return pull(v, 0, 0xffffffff) + __any_sync(full_lanes(), v); }\n"
    )
    body = _fixed(source)
    # the return type must widen too: a 64-bit mask returned as 32 bits loses lanes 32-63
    assert "constexpr unsigned long long full_lanes() { return PORTAGPU_FULL_MASK; }" in body
    assert "float pull_f(float v, int src, unsigned long long m = PORTAGPU_FULL_MASK)" in body
    assert "pull(v, 0, PORTAGPU_FULL_MASK)" in body
    assert "0xffffffff" not in body


def test_a_warp_width_written_as_its_log2_becomes_the_native_shift():
    source = (
        "#define LOG2_WARP_SIZE 5U\n"
        "constexpr int kWarpShift = 5;\n"
        "__global__ void k(int* x) { x[threadIdx.x >> LOG2_WARP_SIZE] = threadIdx.x >> kWarpShift; }\n"
    )
    body = _fixed(source)
    assert "#define LOG2_WARP_SIZE ((unsigned)PORTAGPU_WARP_SHIFT)" in body
    assert "constexpr int kWarpShift = PORTAGPU_WARP_SHIFT;" in body


def test_a_ballot_function_kept_in_32_bits_by_its_caller_is_widened():
    source = (
        "__device__ unsigned long long vote(bool p) { return __ballot_sync(~0ull, p); }\n"
        "__device__ int f(bool p) { int bits = vote(p); unsigned long long w = vote(p);"
        " return bits + (int)(w >> 32); }\n"
    )
    body = _fixed(source)
    assert "unsigned long long bits = vote(p);" in body
    assert "unsigned long long w = vote(p);" in body


_ROW_KERNEL = (
    "__global__ void rows(float* y, int n) {\n"
    "  int w = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;\n"
    "  if (w < n) y[w] = 0.f;\n"
    "}\n"
)


def test_a_32_thread_launch_of_a_warpsize_kernel_agrees_with_its_logical32_translation():
    """PG510's launch makes the kernel logical32 (its warpSize reads 32), so
    the translation is right as launched: the 32 is kept, not left unconverted."""
    source = _ROW_KERNEL + "void run(float* y, int n) { int grid = (n * 32 + 255) / 256; rows<<<grid, 256>>>(y, n); }\n"
    tr = translate(source, engine="builtin", diagnose=True)
    assert [m["model"] for m in tr.report.warp_models if m["function"] == "rows"] == ["logical32"]
    assert [(k["line"], k["rule"]) for k in tr.report.kept] == [(5, "PG510")]
    assert all(u["rule"] != "PG510" for u in tr.report.unconverted)


def test_a_32_thread_launch_in_a_macro_body_makes_the_kernel_logical32_too():
    """The launch sits in a macro the host function invokes, with `block`
    declared in that function: hipify reads it there, as the linter does, so
    the kernel keeps 32-lane warps and the 32 is kept."""
    source = _ROW_KERNEL + "#define LAUNCH(k) k<<<1, block>>>(y, n)\nvoid run(float* y, int n) { dim3 block(32, 4); LAUNCH(rows); }\n"
    tr = translate(source, engine="builtin", diagnose=True)
    assert [m["model"] for m in tr.report.warp_models if m["function"] == "rows"] == ["logical32"]
    assert [(k["line"], k["rule"]) for k in tr.report.kept] == [(6, "PG510")]
    assert all(u["rule"] != "PG510" for u in tr.report.unconverted)
