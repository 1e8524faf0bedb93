"""`portagpu check-kernels --builtin` records what every tuning.yaml row launches on
each vendor (the compile of all of them runs in .ci/run, with the user cache, and its
result is in benchmarks/results/kernelcheck_builtin.json)."""

import pytest

from portagpu.kernelcheck.builtin import record_rows, row_sizes
from portagpu.kernelcheck.targets import resolve

pytest.importorskip("torch")


def test_sizes_reach_every_row_and_branch():
    assert row_sizes([{"upto": 1024}, {"upto": 8192}, {}]) == [1024, 8192, 8193]
    assert row_sizes([{"upto": 256, "max_fused_cols": 32768}, {"max_fused_cols": 32768}]) == [
        256,
        257,
        32768,
        32769,
    ]
    assert row_sizes([{}]) == [1 << 20]


@pytest.mark.parametrize("target", ["gfx942", "sm_90"])
def test_every_tuning_row_of_the_vendor_is_recorded(target):
    from portagpu.kernels import _tuning

    vendor_target = resolve(target)
    specs, cuda, notes = record_rows(vendor_target)
    assert notes == []
    origins = {s.origin.split(" size=")[0] for s in specs} | {
        c.origin.split(" size=")[0] for c in cuda
    }
    for name, entry in _tuning.table().items():
        section = vendor_target.vendor if entry.get(vendor_target.vendor) else "default"
        for index in range(len(entry.get(section))):
            assert f"tuning.yaml {name}.{section}[{index}]" in origins
    # portagpu.launch semantics: num_warps in 32-thread units, AMD options kept for AMD targets
    assert all(s.warp_units and not s.problem for s in specs)
    matmul = [s for s in specs if s.kernel.short == "matmul_bias_act_kernel"]
    assert {s.arg_types()["a_ptr"] for s in matmul} == {"*fp16", "*bf16", "*fp32"}
    assert {s.constexprs()["INPUT_PRECISION"] for s in matmul} == {
        "ieee"
    }  # tf32 fails on gfx90a/RDNA
    if vendor_target.vendor == "amd":
        assert all(s.options.get("matrix_instr_nonkdim") == 16 for s in matmul)
        fp32 = [s for s in matmul if s.arg_types()["a_ptr"] == "*fp32" and ".amd[1]" in s.origin]
        assert fp32 and all(
            s.constexprs()["BLOCK_M"] == 128 for s in fp32
        )  # the row's fp32 override
    assert {c.name for c in cuda} >= {"pg_sum_f32", "pg_histogram_f32", "pg_scan_f32"}


def test_recording_launches_nothing_and_restores_portagpu_launch():
    import portagpu

    before = portagpu.launch
    record_rows(resolve("gfx90a"))
    assert portagpu.launch is before
