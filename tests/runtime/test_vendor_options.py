"""Warp scaling and vendor-only Triton options, on simulated devices (see
conftest.py: AMD gfx942 wave64, AMD gfx1100 wave32, NVIDIA sm_90). The kernel
is a stand-in that records what Triton would have been called with."""

from __future__ import annotations

import pytest

import portagpu
from portagpu.runtime.triton_launch import MAX_BLOCK_THREADS, native_num_warps


class RecordingKernel:
    """Looks like a Triton kernel to portagpu; records each launch."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def run(self, *args, **kwargs):  # pragma: no cover - launch goes through __getitem__
        raise AssertionError

    def __getitem__(self, grid):
        def launcher(*args, **kwargs):
            self.calls.append({"grid": grid, "args": args, "kwargs": kwargs})

        return launcher


RecordingKernel.__module__ = "triton.runtime.simulated"


@pytest.mark.parametrize("warp", [32, 64])
@pytest.mark.parametrize("num_warps", [1, 2, 4, 8, 16, 32, 64])
def test_thread_count_is_kept_and_clamped(warp, num_warps):
    native = native_num_warps(num_warps, warp)
    wanted = min(max(num_warps * 32, warp), MAX_BLOCK_THREADS)
    assert native * warp == wanted
    assert native * warp <= MAX_BLOCK_THREADS


def test_unknown_warp_size_leaves_num_warps_alone():
    assert native_num_warps(8, None) == 8
    assert native_num_warps(None, 64) is None


@pytest.mark.parametrize(
    ("device", "given", "expected"),
    [("gfx942", 8, 4), ("gfx942", 1, 1), ("gfx942", 32, 16), ("gfx1100", 8, 8),
     ("gfx1100", 64, 32), ("sm_90", 8, 8)],
)
def test_launch_scales_num_warps_for_the_device(use_device, device, given, expected):
    use_device(device)
    kernel = RecordingKernel()
    portagpu.launch(kernel, (3,), "x", num_warps=given, BLOCK=64)
    call = kernel.calls[-1]
    assert call["kwargs"]["num_warps"] == expected
    assert call["kwargs"]["BLOCK"] == 64
    assert call["grid"] == (3,) and call["args"] == ("x",)


@pytest.mark.parametrize("device", ["gfx942", "gfx1100"])
def test_amd_options_pass_through_on_amd(use_device, device):
    use_device(device)
    kernel = RecordingKernel()
    portagpu.launch(kernel, (1,), waves_per_eu=2, matrix_instr_nonkdim=16, maxnreg=128)
    kwargs = kernel.calls[-1]["kwargs"]
    assert kwargs["waves_per_eu"] == 2 and kwargs["matrix_instr_nonkdim"] == 16
    assert "maxnreg" not in kwargs  # NVIDIA-only


def test_amd_options_are_dropped_on_nvidia(use_device):
    use_device("sm_90")
    kernel = RecordingKernel()
    portagpu.launch(kernel, (1,), waves_per_eu=2, matrix_instr_nonkdim=16, maxnreg=128, num_stages=3)
    kwargs = kernel.calls[-1]["kwargs"]
    assert "waves_per_eu" not in kwargs and "matrix_instr_nonkdim" not in kwargs
    assert kwargs["maxnreg"] == 128 and kwargs["num_stages"] == 3
    assert "num_warps" not in kwargs  # not given: Triton's own default


def test_device_change_is_noticed(use_device):
    kernel = RecordingKernel()
    use_device("gfx942")
    portagpu.launch(kernel, (1,), num_warps=8)
    use_device("sm_90")
    portagpu.launch(kernel, (1,), num_warps=8)
    assert [c["kwargs"]["num_warps"] for c in kernel.calls] == [4, 8]
