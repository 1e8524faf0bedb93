"""The translated warp logic gives the original's answer on wave64 and wave32.

Each kernel below (written for these tests) is translated by portagpu; the
translation then runs in lanesim (numpy, every lane of a block in lockstep)
on 64-lane and 32-lane wavefronts, and the original runs on 32-lane warps as
CUDA does. The answers must agree. Each test also runs the untranslated
original on a wave64, which must give a different answer: the model can tell
a wrong translation from a right one.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from portagpu.hipify_bridge import translate


def _sibling(name: str):
    """A helper module beside this file (tests/ is not a package)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


LaneSim = _sibling("lanesim").LaneSim

BLOCK, GRID = 256, 2


def _macros(wave: int) -> dict[str, int]:
    return {
        "PORTAGPU_WARP_SIZE": wave,
        "PORTAGPU_LOGICAL_WARP_SIZE": 32,
        "PORTAGPU_FULL_MASK": (1 << 64) - 1,
        "PORTAGPU_WARP_SHIFT": wave.bit_length() - 1,
    }


def _run(
    source: str, wave: int, kernel: str, inputs: dict, outputs: dict, block=BLOCK, grid=GRID
) -> dict[str, np.ndarray]:
    arrays = {k: v.copy() for k, v in {**inputs, **outputs}.items()}
    LaneSim(source, wave=wave, macros=_macros(wave)).launch(kernel, grid, block, **arrays)
    return {k: arrays[k] for k in outputs}


def _check(
    source: str,
    kernel: str,
    inputs: dict,
    outputs: dict,
    model: str,
    raw_wrong: bool = True,
    **launch,
):
    tr = translate(source, engine="builtin")
    chosen = {m["function"]: m["model"] for m in tr.report.warp_models}
    assert chosen[kernel] == model, tr.report.warp_models
    expected = _run(source, 32, kernel, inputs, outputs, **launch)
    for wave in (64, 32):
        got = _run(tr.text, wave, kernel, inputs, outputs, **launch)
        for name in outputs:
            np.testing.assert_allclose(
                np.asarray(got[name], dtype=float),
                np.asarray(expected[name], dtype=float),
                err_msg=f"wave{wave} {name}",
            )
    # where the untranslated original is wrong on a wave64, the model sees it
    raw = _run(source, 64, kernel, inputs, outputs, **launch)
    differs = any(
        not np.allclose(np.asarray(raw[n], dtype=float), np.asarray(expected[n], dtype=float))
        for n in outputs
    )
    assert differs == raw_wrong
    return tr


RNG = np.random.default_rng(7)
X = RNG.integers(-8, 9, size=BLOCK * GRID).astype(float)

BLOCK_SUM_GENERIC = """
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffff, v, offset);
  return __shfl_sync(0xffffffff, v, 0);  // every lane gets its warp's sum
}
__global__ void block_sum(const float* x, float* out) {
  __shared__ float partial[256 / 32];
  int lane = threadIdx.x % 32;
  int wid = threadIdx.x / 32;
  float v = warp_sum(x[blockIdx.x * blockDim.x + threadIdx.x]);
  if (lane == 1) partial[wid] = v;
  __syncthreads();
  v = (threadIdx.x < blockDim.x / 32) ? partial[lane] : 0.0f;
  if (wid == 0) v = warp_sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
"""


def test_shuffle_down_block_sum_is_widened_and_right_on_both_widths():
    tr = _check(BLOCK_SUM_GENERIC, "block_sum", {"x": X}, {"out": np.zeros(GRID)}, "native")
    assert "PORTAGPU_WARP_SIZE / 2" in tr.text


BLOCK_SUM_32_SLOTS = BLOCK_SUM_GENERIC.replace("partial[256 / 32]", "partial[32]")


def test_a_shared_array_of_32_keeps_32_lane_warps_and_is_right_on_both_widths():
    tr = _check(BLOCK_SUM_32_SLOTS, "block_sum", {"x": X}, {"out": np.zeros(GRID)}, "logical32")
    assert "__shfl_down_sync(PORTAGPU_FULL_MASK, v, offset, PORTAGPU_LOGICAL_WARP_SIZE)" in tr.text
    assert "threadIdx.x % 32" in tr.text  # every 32 of the kernel stays 32


XOR_SUM = """
__global__ void block_sum_xor(const float* x, float* out) {
  int lane = threadIdx.x & 31;
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int m = 1; m < 32; m *= 2)
    v += __shfl_xor_sync(0xffffffff, v, m);
  if (lane == 0) atomicAdd(&out[blockIdx.x], v);
}
"""


def test_xor_butterfly_block_sum_is_widened_and_right():
    # a butterfly never crosses a 32-lane half: the original is right on wave64 too
    tr = _check(
        XOR_SUM, "block_sum_xor", {"x": X}, {"out": np.zeros(GRID)}, "native", raw_wrong=False
    )
    assert "threadIdx.x & (PORTAGPU_WARP_SIZE - 1)" in tr.text


BALLOT_COUNT = """
__global__ void count_positive(const float* x, int* count) {
  int lane = threadIdx.x % 32;
  unsigned votes = __ballot_sync(0xffffffff, x[blockIdx.x * blockDim.x + threadIdx.x] > 0.0f);
  if (lane == 0) atomicAdd(&count[0], __popc(votes));
}
"""


def test_ballot_count_is_widened_to_64_bits():
    tr = _check(
        BALLOT_COUNT, "count_positive", {"x": X}, {"count": np.zeros(1, dtype=object)}, "native"
    )
    assert "unsigned long long votes" in tr.text and "__popcll(votes)" in tr.text


BALLOT_PER_WARP = """
__global__ void votes_per_warp(const float* x, int* out) {
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned votes = __ballot_sync(0xffffffff, x[gid] > 0.0f);
  int all_pos = __all_sync(0xffffffff, x[gid] > -100.0f);
  if (threadIdx.x % 32 == 0) out[gid / 32] = __popc(votes) + 100 * all_pos;
}
void launch(const float* x, int* out, int n) {
  votes_per_warp<<<n / 256, dim3(32 * 8)>>>(x, out);
}
"""


def test_host_launch_shape_of_32_keeps_per_warp_answers_on_wave64():
    tr = _check(
        BALLOT_PER_WARP,
        "votes_per_warp",
        {"x": X},
        {"out": np.zeros(BLOCK * GRID // 32, dtype=object)},
        "logical32",
    )
    assert "portagpu_ballot32(PORTAGPU_FULL_MASK" in tr.text
    assert "portagpu_all32(" in tr.text


BLOCK_SCAN = """
__global__ void block_scan(const float* x, float* out) {
  __shared__ float sums[256 / 32];
  int lane = threadIdx.x % 32;
  int wid = threadIdx.x / 32;
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int d = 1; d < 32; d *= 2) {
    float t = __shfl_up_sync(0xffffffff, v, d);
    if (lane >= d) v += t;
  }
  if (lane == 31) sums[wid] = v;
  __syncthreads();
  if (wid == 0) {
    float s = (lane < blockDim.x / 32) ? sums[lane] : 0.0f;
    for (int d = 1; d < 32; d *= 2) {
      float t = __shfl_up_sync(0xffffffff, s, d);
      if (lane >= d) s += t;
    }
    if (lane < blockDim.x / 32) sums[lane] = s;
  }
  __syncthreads();
  if (wid > 0) v += sums[wid - 1];
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
"""


def test_scan_naming_lane_31_keeps_32_lane_warps():
    # `lane == 31` means "the last lane": a widened kernel would read the wrong lane
    # (the original happens to be right on wave64: its lane guards keep each half apart)
    tr = _check(
        BLOCK_SCAN,
        "block_scan",
        {"x": X},
        {"out": np.zeros(BLOCK * GRID)},
        "logical32",
        raw_wrong=False,
    )
    assert "__shfl_up_sync(PORTAGPU_FULL_MASK, v, d, PORTAGPU_LOGICAL_WARP_SIZE)" in tr.text


BLOCK_SCAN_GENERIC = BLOCK_SCAN.replace("lane == 31", "lane == warpSize - 1")


def test_scan_written_with_warpsize_is_widened_and_right():
    _check(
        BLOCK_SCAN_GENERIC,
        "block_scan",
        {"x": X},
        {"out": np.zeros(BLOCK * GRID)},
        "native",
        raw_wrong=True,
    )


ANY_GUARD = """
__global__ void any_negative(const float* x, int* out) {
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  int warp = gid / 32;
  if (threadIdx.x % 32 == 0) out[warp] = 0;
  int hit = __any_sync(0xffffffff, x[gid] < -7.0f);
  if (threadIdx.x % 32 == 0) out[warp] = hit;
}
void go(const float* x, int* out, int n) { any_negative<<<n / 128, 4 * 32>>>(x, out); }
"""


def test_vote_per_32_lane_warp_with_a_32_based_launch_is_logical():
    tr = _check(
        ANY_GUARD,
        "any_negative",
        {"x": X},
        {"out": np.zeros(BLOCK * GRID // 32, dtype=object)},
        "logical32",
        block=128,
        grid=4,
    )
    assert "portagpu_any32(" in tr.text


@pytest.mark.parametrize("wave", [64, 32])
def test_lanesim_shuffle_matches_hip_definition(wave):
    # __shfl_down with width 32 on a wave64: lanes 32-63 form their own segment
    sim = LaneSim(
        "__global__ void k(int* o) { o[threadIdx.x] = __shfl_down_sync(~0ull, "
        "(int)threadIdx.x, 16, 32); }",
        wave=wave,
    )
    out = np.zeros(64, dtype=object)
    sim.launch("k", 1, 64, o=out)
    expected = [t + 16 if t % 32 < 16 else t for t in range(64)]
    assert list(out) == expected
