"""CUDA C kernels: hipify + Debian's hipcc for AMD, nvcc for NVIDIA; the launch's block
and dynamic shared memory against each target's limits."""

import shutil

import pytest

from portagpu.kernelcheck.cuda_check import CudaSpec, check_cuda_specs
from portagpu.kernelcheck.targets import parse_targets
from portagpu.kernelcheck.verdict import DOES_NOT_FIT, FITS, NOT_CHECKED

SOURCE = r"""
extern "C" __global__ void stage(const float* x, float* y, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = tile[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(128) bounded(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= 2.0f;
}
"""


def checks_for(targets, kc_cache, *specs):
    return {
        (c.name, c.spec, c.target): c
        for c in check_cuda_specs(list(specs), list(parse_targets(targets)), cache=kc_cache)
    }


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc is not installed")
def test_amd_targets_through_hipify_and_hipcc(kc_cache):
    fits = CudaSpec("stage", SOURCE, block=(256, 1, 1), shared_mem=60000)
    too_wide = CudaSpec("stage", SOURCE, block=(2048, 1, 1))
    bounded = CudaSpec("bounded", SOURCE, block=(256, 1, 1))
    by = checks_for("gfx90a,gfx942,gfx1100", kc_cache, fits, too_wide, bounded)
    ok = by[("stage", fits.label(), "gfx90a")]
    assert ok.status == FITS and ok.shared == 60000 and ok.registers["vgpr"] > 0 and ok.occupancy
    as_gfx940 = by[("stage", fits.label(), "gfx942")]
    assert as_gfx940.status == FITS and "compiled as gfx940" in as_gfx940.detail
    assert by[("stage", too_wide.label(), "gfx90a")].reasons == [
        "2048 threads per block > 1024 (a block)"
    ]
    assert by[("bounded", bounded.label(), "gfx90a")].reasons == [
        "256 threads per block > 128 (__launch_bounds__)"
    ]
    rdna3 = by[("stage", fits.label(), "gfx1100")]
    assert rdna3.status == NOT_CHECKED and "hipcc here cannot compile for gfx1100" in rdna3.detail


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_nvidia_targets_through_nvcc(kc_cache):
    small = CudaSpec("stage", SOURCE, block=(256, 1, 1), shared_mem=1024)
    big = CudaSpec("stage", SOURCE, block=(256, 1, 1), shared_mem=60000)
    by = checks_for("sm_90", kc_cache, small, big)
    assert by[("stage", small.label(), "sm_90")].status == FITS
    assert by[("stage", small.label(), "sm_90")].registers["regs"] > 0
    over = by[("stage", big.label(), "sm_90")]
    assert over.status == DOES_NOT_FIT and "no opt-in above 48 KiB" in over.reasons[0]


def test_missing_compilers_are_said_not_passed(monkeypatch, kc_cache):
    from portagpu.kernelcheck import toolchain as tc

    monkeypatch.setattr(tc, "toolchain", lambda: tc.Toolchain("3.9.0", "", frozenset(), None, None))
    monkeypatch.setattr("portagpu.kernelcheck.cuda_check.toolchain", tc.toolchain)
    (amd, nv) = check_cuda_specs(
        [CudaSpec("stage", SOURCE, block=(64, 1, 1))],
        list(parse_targets("gfx90a,sm_80")),
        cache=kc_cache,
    )
    assert amd.status == nv.status == NOT_CHECKED
    assert "hipcc is not on PATH" in amd.detail and "nvcc is not on PATH" in nv.detail
