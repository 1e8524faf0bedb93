"""Real compiles with Triton's own AMD and NVIDIA backends (no GPU): the kernels that
must fail do, each for the right reason, and a second check compiles nothing."""

import pytest

from portagpu.kernelcheck.check import check_specs
from portagpu.kernelcheck.discover import specs_for_kernel
from portagpu.kernelcheck.targets import parse_targets
from portagpu.kernelcheck.verdict import COMPILE_ERROR, DOES_NOT_FIT, FITS

from .conftest import needs_triton_backends

pytestmark = needs_triton_backends()


def run(kernel, targets, cache, **kw):
    specs, note = specs_for_kernel(kernel, **kw)
    assert specs, note
    return check_specs(specs, list(parse_targets(targets)), cache=cache)


def one(report, target, text=""):
    """The check for `target` whose specialisation or autotune config mentions `text`."""
    (found,) = [c for c in report.checks if c.target == target and text in f"{c.spec} {c.config}"]
    return found


def test_num_warps_32_compiles_for_gfx942_but_cannot_launch(samples, kc_cache):
    report = run(samples.add_kernel, "gfx942,gfx1100,sm_90", kc_cache)
    on_mi300 = one(report, "gfx942", "nw=32")
    assert on_mi300.status == DOES_NOT_FIT and on_mi300.blocking
    assert (
        on_mi300.threads == 2048
        and "2048 threads per block > 1024 (32 warps x 64 lanes)" in on_mi300.reasons
    )
    assert on_mi300.outcome == "launch raises OutOfResources"
    # the same kernel is fine where a warp is 32 lanes
    assert (
        one(report, "gfx1100", "nw=32").status == FITS
        and one(report, "gfx1100", "nw=32").threads == 1024
    )
    assert (
        one(report, "sm_90", "nw=32").status == FITS
        and one(report, "sm_90", "nw=32").registers["regs"] > 0
    )
    assert one(report, "gfx942", "nw=4").status == FITS  # 4 wavefronts of 64: 256 threads
    assert report.failures == [on_mi300]


def test_nvidia_only_extra_cuda_function_is_named_on_amd(samples, kc_cache):
    report = run(samples.sm_id_kernel, "gfx942,sm_90", kc_cache)
    amd = one(report, "gfx942")
    assert amd.status == COMPILE_ERROR and amd.blocking
    assert amd.reasons == ["uses NVIDIA-only tl.extra.cuda.smid (no AMD lowering)"]
    assert "invalid instruction" in amd.detail  # the AMD assembler's own words
    assert one(report, "sm_90").status == FITS


def test_lds_hungry_dot_config_is_dropped_on_gfx1100_and_kept_on_gfx942(samples, kc_cache):
    report = run(samples.tiled_dot_kernel, "gfx1100,gfx942", kc_cache)
    big = one(report, "gfx1100", "2/2")
    assert big.status == DOES_NOT_FIT and big.shared > 64 * 1024
    assert big.dropped and not big.blocking  # Triton's autotuner skips it: the tuned set shrinks
    assert "of LDS > 64 KiB per block" in big.reasons[0]
    assert one(report, "gfx1100", "1/2").status == FITS
    assert (
        one(report, "gfx942", "2/2").status == FITS
        and one(report, "gfx942", "2/2").shared <= 64 * 1024
    )
    assert report.failures == [] and report.dropped == [big]


def test_the_same_config_as_a_fixed_launch_fails(samples, kc_cache):
    fixed = {
        "a": "*fp16",
        "b": "*fp16",
        "c": "*fp16",
        "K": "i32",
        "BM": 64,
        "BN": 64,
        "BK": 128,
        "num_warps": 4,
        "num_stages": 4,
    }
    from portagpu.kernelcheck.discover import spec_from_declaration

    spec = spec_from_declaration(samples.tiled_dot_kernel.fn, fixed, origin="test")
    (check,) = check_specs([spec], list(parse_targets("gfx1100")), cache=kc_cache).checks
    assert (
        check.status == DOES_NOT_FIT
        and check.blocking
        and check.outcome == "launch raises OutOfResources"
    )


def test_second_check_comes_from_the_cache(samples, kc_cache):
    first = run(samples.add_kernel, "gfx90a,sm_80", kc_cache)
    again = run(samples.add_kernel, "gfx90a,sm_80", kc_cache)
    assert again.summary()["compiled"] == 0 and again.summary()["cache_hits"] == 4
    assert [c.status for c in again.checks] == [c.status for c in first.checks]
    assert [c.status for c in first.checks] == [DOES_NOT_FIT, FITS, FITS, FITS]  # nw=32 on gfx90a


def test_a_kernel_the_worker_cannot_import_is_not_checked(tmp_path, kc_cache):
    from portagpu.kernelcheck.discover import load_path

    path = tmp_path / "kc_vanishing.py"
    path.write_text(
        "import triton\nimport triton.language as tl\nimport portagpu.kernelcheck as kc\n\n"
        "@kc.signature(p='*fp32')\n@triton.jit\ndef k(p):\n    tl.store(p, 1.0)\n"
    )
    specs, _ = specs_for_kernel(load_path(path).k)
    path.write_text("raise ValueError('not importable any more')\n")
    (check,) = check_specs(specs, list(parse_targets("sm_90")), cache=kc_cache).checks
    assert check.status == "not-checked" and "ValueError: not importable any more" in check.detail


@pytest.mark.parametrize("target", ["gfx1030"])
def test_a_target_triton_cannot_compile_for_is_not_checked_not_failed(samples, kc_cache, target):
    report = run(samples.add_kernel, target, kc_cache)
    check = one(report, target, "nw=4")
    if check.status in (FITS, DOES_NOT_FIT):
        # Triton 3.6 (the GPU machine's) still compiles for RDNA2; 3.9 does not
        import triton

        pytest.skip(
            f"Triton {triton.__version__} compiles for {target}: no unsupported target to test"
        )
    assert check.status == "not-checked" and "does not compile for gfx1030" in check.detail
    assert report.failures == [] and report.skipped_targets() == {target: check.detail}
