"""The AMD path of CudaKernel end to end as far as a machine with no AMD GPU
allows: the source the ROCm backend hands to CuPy/hiprtc (hipify_bridge
translation plus the -DWARP_SIZE / -DPORTAGPU_WARP_SIZE defines) is compiled
for gfx90a (wave64) by the real hipcc. CuPy itself is the recording fake."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

import portagpu

HIPCC = shutil.which("hipcc")
pytestmark = pytest.mark.skipif(HIPCC is None, reason="needs hipcc (apt-get install hipcc)")

WARP_REDUCE = r"""
extern "C" __global__ void row_sum(const float* x, float* out, int n) {
    float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if (threadIdx.x % PORTAGPU_WARP_SIZE == 0) atomicAdd(out, v);
}
"""


def test_translated_source_compiles_for_wave64(use_device, fake_cupy, tmp_path):
    pytest.importorskip("portagpu.hipify_bridge")
    use_device("gfx942")
    cupy = fake_cupy(is_hip=True)
    portagpu.launch(portagpu.CudaKernel(WARP_REDUCE, "row_sum"), 1, cupy.ndarray(), cupy.ndarray(),
                    64, block=64)
    compiled = cupy.compiled[-1]
    assert "-DWARP_SIZE=64" in compiled["options"]
    source = tmp_path / "row_sum.hip"
    source.write_text(compiled["code"])
    command = [HIPCC, "-x", "hip", "-std=c++17", "--offload-arch=gfx90a", "-include",
               "hip/hip_runtime.h", "-c", str(source), "-o", str(tmp_path / "row_sum.o"),
               *compiled["options"]]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240,
                            env={**os.environ, "HIP_PLATFORM": "amd"})
    assert result.returncode == 0, result.stderr[-3000:]
