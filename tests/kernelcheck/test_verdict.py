"""Verdicts from compile facts and the limits table (no compiler involved: the facts
are what a worker reports, written out here)."""

import pytest

from portagpu.kernelcheck.report import Report, format_table
from portagpu.kernelcheck.spec import KernelRef, KernelSpec
from portagpu.kernelcheck.targets import resolve
from portagpu.kernelcheck.verdict import COMPILE_ERROR, DOES_NOT_FIT, FITS, NOT_CHECKED, judge

REF = KernelRef(name="k", module="m", file="m.py", line=3)


def spec(mode="fixed", **options):
    return KernelSpec(
        kernel=REF,
        source_hash="h",
        params=("x", "BLOCK"),
        families={"cuda": [["*fp32", "D"], ["constexpr", 64]]},
        options=options,
        mode=mode,
        config="1/1" if mode == "autotune" else "",
        group="g",
    )


def compiled(num_warps=4, warp=64, shared=0, **more):
    return {"compiled": True, "num_warps": num_warps, "warp_size": warp, "shared": shared, **more}


def test_2048_threads_at_wave64_do_not_fit_and_the_launch_raises():
    check = judge(spec(num_warps=32), resolve("gfx942"), compiled(num_warps=32, warp=64))
    assert check.status == DOES_NOT_FIT and check.threads == 2048 and check.blocking
    assert check.reasons == ["2048 threads per block > 1024 (32 warps x 64 lanes)"]
    assert check.outcome == "launch raises OutOfResources"


def test_the_same_warps_fit_a_wave32_target():
    check = judge(spec(num_warps=32), resolve("gfx1100"), compiled(num_warps=32, warp=32))
    assert check.status == FITS and check.threads == 1024 and not check.blocking


def test_lds_over_the_limit():
    check = judge(spec(), resolve("gfx1100"), compiled(warp=32, shared=98304))
    assert check.status == DOES_NOT_FIT and "96 KiB of LDS > 64 KiB per block" in check.reasons[0]
    assert judge(spec(), resolve("gfx950"), compiled(shared=98304)).status == FITS  # 160 KiB there


def test_an_autotune_config_that_does_not_fit_is_dropped_not_blocking():
    check = judge(spec(mode="autotune"), resolve("gfx1100"), compiled(warp=32, shared=98304))
    assert check.dropped and not check.blocking
    assert check.outcome.startswith("autotune drops this config")


def test_every_config_dropped_fails_the_autotuned_launch():
    target = resolve("gfx1100")
    checks = [
        judge(spec(mode="autotune"), target, compiled(warp=32, shared=98304)) for _ in range(2)
    ]
    report = Report(checks, [target])
    (group,) = [c for c in report.checks if c.config == "all"]
    assert group.blocking and "none of the 2 autotune configs runs on gfx1100" in group.reasons[0]
    assert report.failures == [group]


def test_compile_errors_a_fixed_launch_raises_and_autotune_only_skips_some():
    error = {
        "compiled": False,
        "error": "RuntimeError: invalid instruction",
        "error_type": "RuntimeError",
        "droppable": False,
    }
    fixed = judge(spec(), resolve("gfx942"), error)
    assert fixed.status == COMPILE_ERROR and fixed.blocking and fixed.outcome == "launch raises"
    tuned = judge(spec(mode="autotune"), resolve("gfx942"), error)
    assert tuned.blocking and tuned.outcome.startswith("autotuning raises")
    droppable = dict(error, error_type="PTXASError", droppable=True)
    assert judge(spec(mode="autotune"), resolve("sm_90"), droppable).dropped


def test_nvidia_registers_give_occupancy_or_stop_the_launch():
    sm90 = resolve("sm_90")
    check = judge(
        spec(), sm90, compiled(num_warps=8, warp=32, shared=16384, registers={"regs": 128})
    )
    # 128 regs x 32 lanes = 4096 per warp, 16 warps per SM by registers -> 2 blocks of 8 warps
    assert (check.status, check.occupancy, check.occupancy_unit) == (FITS, 2, "blocks/SM")
    too_many = judge(spec(), sm90, compiled(num_warps=32, warp=32, registers={"regs": 255}))
    assert too_many.status == DOES_NOT_FIT and too_many.outcome.startswith("launch fails")


def test_amd_occupancy_is_the_compilers_and_spills_are_noted():
    check = judge(
        spec(),
        resolve("gfx942"),
        compiled(registers={"vgpr": 128, "sgpr": 30}, spills=12, occupancy=4),
    )
    assert (check.status, check.occupancy, check.spills) == (FITS, 4, 12)
    assert "spills 12 registers" in check.detail


def test_without_llvms_figure_amd_occupancy_follows_the_vgpr_budget():
    # 130 VGPRs -> 136 allocated; 512 per SIMD lane on gfx942 -> 3 waves (8 at most)
    check = judge(
        spec(), resolve("gfx942"), compiled(registers={"vgpr": 130, "agpr": 0, "sgpr": 20})
    )
    assert check.occupancy == 3
    # gfx1100: 132 VGPRs -> 144 in blocks of 24; 1,536 / 144 -> 10 waves (LLVM says 10 for such a kernel)
    rdna3 = judge(
        spec(), resolve("gfx1100"), compiled(warp=32, registers={"vgpr": 132, "sgpr": 20})
    )
    assert rdna3.occupancy == 10


def test_not_checked_is_never_a_pass():
    check = judge(
        spec(),
        resolve("gfx1030"),
        {
            "compiled": False,
            "unsupported_target": True,
            "triton": "3.9.0",
            "error": "unsupported target: 'gfx1030'",
        },
    )
    assert check.status == NOT_CHECKED and not check.blocking
    report = Report([check], [resolve("gfx1030")])
    assert report.summary()["fits"] == 0 and report.skipped_targets() == {"gfx1030": check.detail}
    assert "not checked for gfx1030: Triton 3.9.0 does not compile for gfx1030" in format_table(
        report
    )


@pytest.mark.parametrize("facts", [{"not_checkable": "importing m.py raised ValueError: boom"}])
def test_a_kernel_that_cannot_be_loaded_is_not_checked(facts):
    check = judge(spec(), resolve("sm_80"), facts)
    assert check.status == NOT_CHECKED and check.detail == facts["not_checkable"]


@pytest.mark.parametrize(
    "tools, amd_reason, nvidia_reason",
    [
        (
            dict(
                triton=None,
                triton_problem="Triton is not installed (pip install triton): Triton kernels "
                "were not compiled",
                families=frozenset(),
            ),
            "Triton is not installed",
            "Triton is not installed",
        ),
        (
            dict(
                triton="3.1.0",
                triton_problem="Triton 3.1.0 is too old for the offline compile check (needs "
                "3.3+): Triton kernels were not compiled",
                families=frozenset({"cuda", "hip"}),
            ),
            "too old",
            "too old",
        ),
        (
            dict(triton="3.9.0", triton_problem="", families=frozenset({"cuda"})),
            "has no AMD (hip) backend installed",
            None,
        ),
    ],
)
def test_a_check_that_cannot_run_says_so_for_each_target_it_skips(
    monkeypatch, tools, amd_reason, nvidia_reason
):
    from portagpu.kernelcheck import check as check_module
    from portagpu.kernelcheck.toolchain import Toolchain

    monkeypatch.setattr(
        check_module, "toolchain", lambda: Toolchain(hipcc=None, nvcc=None, **tools)
    )
    monkeypatch.setattr(
        check_module,
        "run_jobs",
        lambda jobs, **kw: {
            job["id"]: {"compiled": True, "num_warps": 4, "warp_size": 32, "shared": 0}
            for job in jobs
        },
    )
    both = dict(spec().families, hip=spec().families["cuda"])
    report = check_module.check_specs(
        [KernelSpec(**{**spec().__dict__, "families": both})], [resolve("gfx942"), resolve("sm_90")]
    )
    by = {c.target: c for c in report.checks}
    assert by["gfx942"].status == NOT_CHECKED and amd_reason in by["gfx942"].detail
    if nvidia_reason:
        assert by["sm_90"].status == NOT_CHECKED and nvidia_reason in by["sm_90"].detail
        assert set(report.skipped_targets()) == {"gfx942", "sm_90"}
    else:  # the NVIDIA backend is there: compiled (here by a stand-in for the worker)
        assert by["sm_90"].status == FITS and report.skipped_targets() == {
            "gfx942": by["gfx942"].detail
        }
    assert report.summary()["fits"] == (0 if nvidia_reason else 1) and report.failures == []
