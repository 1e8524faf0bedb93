"""Real-code failure classes, reproduced on small sources written for these
tests: header closures, `32U` warp constants, 32-thread tiles mixed with
lane arithmetic, host-side warp constants, constructs HIP cannot compile,
and warp logic that is already wrong in the original."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from portagpu.hipify_bridge import translate
from portagpu.hipify_bridge.compile_check import CompileFlags, compile_hip

from portagpu.cli import main

needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")


def _body(text: str) -> str:
    return text.split("// end of portagpu_hip_compat.h\n", 1)[-1]


def _models(tr) -> dict[str, dict]:
    return {m["function"]: m for m in tr.report.warp_models}


# --- header closure ------------------------------------------------------------------------

COMMON_H = """#pragma once
#include <cuda_runtime.h>
__device__ inline float lane_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}
"""
PLAIN_H = "#pragma once\nstatic inline int twice(int x) { return 2 * x; }\n"
HELPER_H = """#pragma once
#include <cuda_runtime.h>
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) return; } while (0)
"""
KERNEL_CU = """#include "common.h"
#include "util/plain.h"
#include <helper.h>
__global__ void k(float* x) { x[threadIdx.x] = lane_sum(x[threadIdx.x]) + twice(1); }
void run(float* x) { CHECK(cudaDeviceSynchronize()); k<<<1, 64>>>(x); }
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    src = tmp_path / "proj" / "src"
    (src / "util").mkdir(parents=True)
    (src / "common.h").write_text(COMMON_H)
    (src / "util" / "plain.h").write_text(PLAIN_H)
    (src / "kernel.cu").write_text(KERNEL_CU)
    inc = tmp_path / "proj" / "include"
    inc.mkdir()
    (inc / "helper.h").write_text(HELPER_H)
    return tmp_path / "proj"


def _hipify(args: list[str], capsys) -> dict:
    code = main(["hipify", *args, "--format", "json", "--engine", "builtin"])
    out = json.loads(capsys.readouterr().out)
    out["exit"] = code
    return out


def test_headers_of_a_unit_are_translated_into_the_output_tree(project, tmp_path, capsys):
    out = tmp_path / "out"
    result = _hipify(
        [str(project / "src" / "kernel.cu"), "-o", str(out), "-I", str(project / "include")], capsys
    )
    by_path = {Path(f["path"]).name: f for f in result["files"]}
    assert set(by_path) == {"kernel.cu", "common.h", "plain.h", "helper.h"}
    assert by_path["kernel.cu"]["kind"] == "cuda"
    assert {Path(h).name for h in by_path["kernel.cu"]["headers"]} == {
        "common.h",
        "plain.h",
        "helper.h",
    }
    assert by_path["common.h"]["kind"] == "header"
    # headers from outside the input folder: the tree starts at their common parent
    common = (out / "src" / "common.h").read_text()
    assert "hip/hip_runtime.h" in common and "cuda_runtime.h" not in common
    assert "PORTAGPU_FULL_MASK" in common and "(PORTAGPU_WARP_SIZE / 2)" in common
    assert (out / "src" / "util" / "plain.h").exists()  # copied: includes must resolve
    assert "hipError_t" in (out / "include" / "helper.h").read_text()
    assert by_path["kernel.cu"]["hip_include_dirs"] == [str(out / "src"), str(out / "include")]
    unit = (out / "src" / "kernel.hip").read_text()
    assert '#include "common.h"' in unit and "#include <helper.h>" in unit


def test_beside_the_inputs_changed_headers_get_hip_names_and_includes_follow(project, capsys):
    _hipify([str(project / "src" / "kernel.cu"), "-I", str(project / "include")], capsys)
    unit = (project / "src" / "kernel.hip").read_text()
    assert '#include "common.hip.h"' in unit and "#include <helper.hip.h>" in unit
    assert '#include "util/plain.h"' in unit  # nothing to translate: used as it is
    assert (project / "src" / "common.hip.h").exists()
    assert not (project / "src" / "util" / "plain.hip.h").exists()
    before = (project / "src" / "common.hip.h").read_text()
    again = _hipify([str(project / "src" / "kernel.cu"), "-I", str(project / "include")], capsys)
    assert again["exit"] == 0 and (project / "src" / "common.hip.h").read_text() == before


def test_compile_commands_json_gives_include_dirs(project, tmp_path, capsys):
    (project / "compile_commands.json").write_text(
        json.dumps(
            [
                {
                    "directory": str(project),
                    "file": "src/kernel.cu",
                    "command": "nvcc -Iinclude -DFOO=1 -std=c++17 -c src/kernel.cu",
                }
            ]
        )
    )
    out = tmp_path / "out"
    result = _hipify([str(project / "src" / "kernel.cu"), "-o", str(out)], capsys)
    assert (out / "include" / "helper.h").exists()
    assert not any(f["error"] for f in result["files"])


@needs_hipcc
def test_check_takes_defines_and_names_the_original_line_of_an_error(project, tmp_path, capsys):
    (project / "src" / "common.h").write_text(
        COMMON_H + "#ifdef BREAK_IT\n__device__ int broken() { return nope; }\n#endif\n"
    )
    out = tmp_path / "out"
    result = _hipify(
        [
            str(project / "src" / "kernel.cu"),
            "-o",
            str(out),
            "-I",
            str(project / "include"),
            "-D",
            "BREAK_IT",
            "--std",
            "c++17",
            "--check",
            "--targets",
            "gfx90a",
        ],
        capsys,
    )
    unit = next(f for f in result["files"] if f["path"].endswith("kernel.cu"))
    check = next(c for c in unit["sources"][0]["checks"] if c["target"] == "gfx90a")
    assert check["status"] == "failed"
    assert check["original"]["path"].endswith("common.h") and check["original"]["line"] == 8
    assert check["detail"].split(":")[1] == "8" and "nope" in check["detail"]


# --- warp constants ------------------------------------------------------------------------

WARP_32U = """#define WARP_SIZE 32U
__global__ void k(float* x) {
  unsigned lane = threadIdx.x % WARP_SIZE;
  x[threadIdx.x] = __shfl_down_sync(0xffffffff, x[threadIdx.x], lane == 0 ? 1 : 0);
}
"""


def test_a_32u_constant_keeps_its_type_and_no_identifier_is_glued_to_the_suffix():
    tr = translate(WARP_32U, engine="builtin")
    body = _body(tr.text)
    assert "#define WARP_SIZE ((unsigned)PORTAGPU_WARP_SIZE)" in body
    assert "PORTAGPU_WARP_SIZEU" not in tr.text


HOST_USES_CONSTANT = """#define WARP_SIZE 32U
__global__ void generic(float* x) {
  unsigned lane = threadIdx.x % WARP_SIZE;
  float v = x[threadIdx.x];
  for (int o = WARP_SIZE / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  if (lane == 0) x[threadIdx.x / WARP_SIZE] = v;
}
void launch(float* x, int n) {
  const int warp_size = 32;
  size_t smem = (256 / WARP_SIZE) * sizeof(float) * warp_size;
  generic<<<n / 256, 256, smem>>>(x);
}
"""


def test_host_code_keeps_host_values_and_device_code_gets_the_device_width():
    tr = translate(HOST_USES_CONSTANT, engine="builtin")
    body = _body(tr.text)
    assert "#define WARP_SIZE 32U" in body  # the host reads it: stays 32
    assert "const int warp_size = 32;" in body
    assert "(256 / WARP_SIZE) * sizeof(float)" in body
    # grid and block are not built from a 32 here: the kernel is widened at each use
    assert _models(tr)["generic"]["model"] == "native"
    assert "threadIdx.x % ((unsigned)PORTAGPU_WARP_SIZE)" in body
    assert any(
        k["rule"] == "warp_size_constant" and "host code" in k["why"] for k in tr.report.kept
    )


HOST_SHAPE = """__global__ void rows(const float* x, float* y, int n) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  if (threadIdx.x % 32 == 0 && row < n) y[row] = v;
}
void launch(const float* x, float* y, int n) {
  const int warp_size = 32;
  rows<<<(n * warp_size + 255) / 256, 256>>>(x, y, n);
}
"""


def test_a_kernel_launched_with_a_32_based_shape_keeps_32_lane_warps():
    tr = translate(HOST_SHAPE, engine="builtin")
    model = _models(tr)["rows"]
    assert model["model"] == "logical32"
    assert "launched by host `launch`" in model["why"][0] and "warp_size" in model["why"][0]
    body = _body(tr.text)
    assert "/ 32;" in body and "offset" not in body or "o = 16" in body
    assert "__shfl_down_sync(PORTAGPU_FULL_MASK, v, o, PORTAGPU_LOGICAL_WARP_SIZE)" in body
    assert "const int warp_size = 32;" in body


# --- mixed tiles ------------------------------------------------------------------------------

MIXED = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void norm(const float* x, float* out) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  __shared__ float sums[32];
  int warp_id = threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  float s = cg::reduce(warp, x[threadIdx.x], cg::plus<float>{});
  if (lane == 0) sums[warp_id] = s;
  __syncthreads();
  s = lane < blockDim.x / 32 ? sums[lane] : 0.0f;
  s = cg::reduce(warp, s, cg::plus<float>{});
  if (threadIdx.x == 0) out[blockIdx.x * warp.meta_group_size() + warp.meta_group_rank()] = s;
}
__global__ void scale(float* x) {
  int lane = threadIdx.x & 31;
  float v = __shfl_sync(0xffffffff, x[threadIdx.x], 0);
  x[threadIdx.x] = v * lane;
}
"""


def test_a_tiled_kernel_keeps_every_32_and_a_generic_one_is_widened():
    tr = translate(MIXED, engine="builtin")
    models = _models(tr)
    assert models["norm"]["model"] == "logical32"
    assert any("tiled_partition<32>" in why for why in models["norm"]["why"])
    assert models["scale"]["model"] == "native"
    body = _body(tr.text)
    assert "threadIdx.x / 32" in body and "threadIdx.x % 32" in body  # tile and warp agree
    assert "threadIdx.x & (PORTAGPU_WARP_SIZE - 1)" in body
    assert "portagpu_meta_group_size(warp)" in body and "portagpu_meta_group_rank(warp)" in body
    assert "#define PORTAGPU_CG_SHIMS 1" in tr.text


@needs_hipcc
@pytest.mark.parametrize("target", ["gfx90a", "gfx1030"])
def test_mixed_tiles_and_32u_translations_compile_for_amd(tmp_path, target):
    for name, source in (
        ("mixed", MIXED),
        ("warp32u", WARP_32U),
        ("host", HOST_USES_CONSTANT),
        ("blockers", BLOCKERS),
    ):
        path = tmp_path / f"{name}.hip"
        path.write_text(translate(source, engine="builtin").text)
        result = compile_hip(str(path), target, flags=CompileFlags())
        assert result.status == "ok", (name, result.detail)


# --- what HIP cannot compile ------------------------------------------------------------------

BLOCKERS = """#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <omp.h>
#include <math_constants.h>
namespace cg = cooperative_groups;
__global__ void k(const float* x, float* y) {
  auto t = cg::tiled_partition<32>(cg::this_thread_block());
  float v = cg::reduce(t, __ldcs(x + threadIdx.x), cg::greater<float>{});
  __stcs(y + threadIdx.x, v > CUDART_INF_F ? 0.0f : v);
}
void graph_node(void* p) {
  cudaMemsetParams params = {};
  params.dst = p;
}
"""


def test_constructs_hip_cannot_compile_are_reported_with_lines_and_shimmed():
    tr = translate(BLOCKERS, engine="builtin")
    items = {b["id"]: b for b in tr.report.blockers}
    assert items["HB01"]["line"] == 3 and items["HB01"]["shimmed"]
    assert items["HB05"]["line"] == 4 and "__has_include" in items["HB05"]["replacement"]
    assert items["HB13"]["line"] == 5
    assert items["HB03"]["line"] == 9 and items["HB04"]["line"] == 10
    assert items["HB15"]["line"] == 13
    body = _body(tr.text)
    assert "portagpu_load(x + threadIdx.x)" in body and "portagpu_store(" in body
    assert "#if __has_include(<omp.h>)" in body and "hipMemsetParams" in body
    assert "#include <cooperative_groups/reduce.h>" not in body


def test_bf16_and_warp_match_are_reported_without_a_shim():
    tr = translate(
        "#include <cuda_bf16.h>\n__global__ void k(__nv_bfloat16* x, int* m) {\n"
        "  m[0] = __match_any_sync(0xffffffff, (int)threadIdx.x);\n}\n",
        engine="builtin",
    )
    items = {b["id"]: b for b in tr.report.blockers}
    assert not items["HB06"]["shimmed"] and items["HB06"]["line"] == 1
    assert items["HB07"]["line"] == 2 and items["HB08"]["line"] == 3


# --- already wrong in the original -----------------------------------------------------------

TILE_WITH_WARPSIZE = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void partial_sums(const double* x, double* out) {
  extern __shared__ double per_warp[];
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  double s = x[threadIdx.x];
  for (int o = tile.size() / 2; o > 0; o /= 2) s += tile.shfl_down(s, o);
  if (tile.thread_rank() == 0) per_warp[threadIdx.x / warpSize] = s;
}
"""


def test_32_lane_tiles_indexed_by_warpsize_are_flagged_and_made_consistent():
    tr = translate(TILE_WITH_WARPSIZE, engine="builtin")
    assert len(tr.report.suspect) == 1 and tr.report.suspect[0]["line"] == 3
    assert "warpSize" in tr.report.suspect[0]["message"]
    assert "threadIdx.x / PORTAGPU_LOGICAL_WARP_SIZE" in _body(tr.text)
