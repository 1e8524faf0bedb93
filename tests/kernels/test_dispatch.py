import subprocess
import sys

import portagpu.kernels as K
import pytest
import torch
from portagpu.kernels import _dispatch, _tuning

from portagpu.device import Device, device_of
from portagpu.errors import ConfigError, LaunchError


def simulated(backend: str, vendor: str, name: str, warp: int | None, units: int | None) -> Device:
    return Device(vendor=vendor, backend=backend, index=0, name=name, arch=None, warp_size=warp,
                  multiprocessors=units, memory_total=None, blas="simulated", source="test")


NVIDIA = simulated("cuda", "nvidia", "H100", 32, 132)
AMD = simulated("rocm", "amd", "MI300X", 64, 304)

KERNELS = ["add", "reduce", "reduce_rows", "softmax", "layer_norm", "histogram", "cumsum",
           "matmul_bias_act"]


def test_tuning_table_has_rows_for_every_kernel_and_vendor():
    table = _tuning.table()
    assert set(KERNELS) <= set(table)
    for kernel in KERNELS:
        for vendor in ("nvidia", "amd", "apple", "cpu"):
            row = _tuning.config(kernel, vendor, 10**9)
            assert row and "upto" not in row
            assert _tuning.default_impl(kernel, vendor) in _tuning.IMPLS
            assert row.get("num_warps", 1) * 32 <= 1024


def test_rows_are_chosen_by_size():
    small = _tuning.config("softmax", "nvidia", 256)
    large = _tuning.config("softmax", "nvidia", 16384)
    assert small["num_warps"] < large["num_warps"]


def test_a_bad_table_entry_is_reported_with_the_file():
    with pytest.raises(ConfigError, match="tuning.yaml.*last row"):
        _tuning._check_entry("tuning.yaml", "k", {"default": [{"upto": 4, "BLOCK": 1}]})
    with pytest.raises(ConfigError, match="impl"):
        _tuning._check_entry("tuning.yaml", "k", {"impl": {"nvidia": "cutlass"}, "default": [{}]})


def test_cpu_defaults_to_the_torch_reference():
    x = torch.ones(10)
    assert float(K.sum(x)) == 10.0
    assert K.last_impl() == "torch"


def test_an_explicit_impl_that_cannot_run_raises():
    with pytest.raises(LaunchError, match="cuda"):
        K.sum(torch.ones(10), impl="cuda")
    with pytest.raises(LaunchError, match="no cuda implementation"):
        K.softmax(torch.ones(2, 3), impl="cuda")
    with pytest.raises(LaunchError, match="impl='fast'"):
        K.add(torch.ones(2), torch.ones(2), impl="fast")


def test_environment_variable_selects_the_impl(monkeypatch):
    monkeypatch.setenv(_dispatch.ENV_IMPL, "torch")
    K.add(torch.ones(2), torch.ones(2))
    assert K.last_impl() == "torch"


def test_gpu_defaults_come_from_the_table():
    cpu = device_of(torch.empty(0))
    assert cpu.backend == "cpu" and not cpu.is_gpu
    assert _dispatch.unavailable("cuda", NVIDIA) is None
    assert "CUDA (NVIDIA)" in _dispatch.unavailable("cuda", cpu)
    assert _dispatch.choose("histogram", AMD, None, impls=("triton", "cuda", "torch")) == "cuda"
    # inputs that suit only the reference fall back to it
    assert _dispatch.choose("softmax", NVIDIA, None, fits="integer input") == "torch"


@pytest.mark.cpu_only  # beside a Triton GPU backend the interpreter is not run (see below)
def test_triton_runs_on_the_cpu_without_triton_interpret(monkeypatch):
    """The interpreter is chosen per kernel at launch: no environment variable."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    x = torch.randn(4, 33)
    torch.testing.assert_close(K.softmax(x, impl="triton"), torch.softmax(x, -1))
    assert K.last_impl() == "triton"


def test_a_torch_device_without_a_backend_runs_the_reference():
    meta = device_of(torch.empty(0, device="meta"))
    assert _dispatch.unavailable("triton", meta) == "portagpu has no meta backend"
    assert _dispatch.choose("softmax", meta, None) == "torch"


def test_importing_the_package_imports_no_torch_or_triton(tmp_path):
    code = "import sys, portagpu.kernels; assert not {'torch', 'triton'} & set(sys.modules), sys.modules.keys()"
    # from an empty folder, so that the installed portagpu is imported, not a source tree in cwd
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_vendor_options_from_the_table_reach_portagpu_launch(monkeypatch):
    """On (simulated) AMD the matmul row's AMD-only options and constexprs are
    handed to portagpu.launch, which scales num_warps and filters options per vendor."""
    import portagpu

    calls = []
    monkeypatch.setattr(portagpu, "launch", lambda kernel, grid, *args, **meta: calls.append(meta))
    config = _tuning.config("matmul_bias_act", "amd", 4096)
    _dispatch.launch_triton("kernel", (1,), 1, 2, device=AMD, config=config, HAS_BIAS=True)
    meta = calls[-1]
    assert meta["matrix_instr_nonkdim"] == config["matrix_instr_nonkdim"]
    assert meta["waves_per_eu"] == config["waves_per_eu"]
    assert meta["num_warps"] == config["num_warps"] and meta["BLOCK_M"] == config["BLOCK_M"]
    assert meta["HAS_BIAS"] is True
    assert "upto" not in meta


# where the plan tests run Triton: the GPU if there is one, else the interpreter
WHERE = "cuda" if torch.cuda.is_available() else "cpu"


def test_a_call_shape_is_planned_once(monkeypatch):
    """The implementation, table row and launch arguments are worked out on the
    first call of a shape; later calls of that shape reuse them."""
    chosen = []
    original = _dispatch.choose
    monkeypatch.setattr(_dispatch, "choose", lambda *a, **k: chosen.append(a[0]) or original(*a, **k))
    _dispatch.forget_plans()
    x = torch.randn(5, 7, device=WHERE)
    for _ in range(3):
        torch.testing.assert_close(K.softmax(x, impl="torch"), torch.softmax(x, -1))
    assert chosen == ["softmax"]
    K.softmax(torch.randn(5, 8, device=WHERE), impl="torch")  # another shape: planned anew
    K.softmax(x, impl="triton")  # another request
    assert chosen == ["softmax"] * 3
    assert K.last_impl() == "triton"
    K.softmax(x, impl="torch")
    assert K.last_impl() == "torch"  # recorded on every call, not only when planned


def test_the_environment_variable_is_part_of_the_plan(monkeypatch):
    x = torch.randn(4, 9, device=WHERE)
    monkeypatch.setenv(_dispatch.ENV_IMPL, "torch")
    K.softmax(x)
    assert K.last_impl() == "torch"
    monkeypatch.setenv(_dispatch.ENV_IMPL, "triton")
    torch.testing.assert_close(K.softmax(x), torch.softmax(x, -1))
    assert K.last_impl() == "triton"
    monkeypatch.setenv(_dispatch.ENV_IMPL, "cuda")
    with pytest.raises(LaunchError, match="no cuda implementation"):
        K.softmax(x)


def test_a_plan_checks_out_on_every_call():
    x = torch.randn(3, 5, device=WHERE)
    K.softmax(x, impl="triton")
    with pytest.raises(LaunchError, match="out has shape"):
        K.softmax(x, out=torch.empty(3, 6, device=WHERE), impl="triton")
    out = torch.full((3, 5), float("nan"), device=WHERE)
    assert K.softmax(x, out=out, impl="triton") is out
    torch.testing.assert_close(out, torch.softmax(x, -1))


def test_forget_plans_takes_a_changed_table(monkeypatch):
    x = torch.randn(6, 20, device=WHERE)
    K.sum(x, dim=1, impl="triton")
    rows = []
    original = _tuning.config
    monkeypatch.setattr(_tuning, "config", lambda *a: rows.append(a) or original(*a))
    K.sum(x, dim=1, impl="triton")
    assert rows == []  # planned before: the table is not read again
    _dispatch.forget_plans()
    torch.testing.assert_close(K.sum(x, dim=1, impl="triton"), x.sum(1))
    assert rows == [("reduce_rows", device_of(x).vendor, 20)]


def test_a_cpu_tensor_on_a_gpu_host_does_not_run_the_interpreter(monkeypatch):
    """On a host whose Triton compiles for a GPU, CPU tensors take the torch
    reference by default, and an explicit impl="triton" says why it cannot run
    (the interpreter patches triton.language; Triton 3.6 leaves it patched
    after an error, which broke every later GPU compile on the GPU machine)."""
    from portagpu.device import clear_cache

    monkeypatch.setattr("portagpu.runtime.dispatch.detect", lambda: NVIDIA)
    clear_cache()
    try:
        _dispatch.forget_plans()
        x = torch.randn(6, 40)
        torch.testing.assert_close(K.softmax(x), torch.softmax(x, -1))
        assert K.last_impl() == "torch"
        with pytest.raises(LaunchError, match="interpreter is not run beside a Triton GPU backend"):
            K.sum(x, dim=1, impl="triton")
    finally:
        monkeypatch.undo()
        clear_cache()
        _dispatch.forget_plans()


def test_alternating_call_shapes_each_run_their_own_plan(monkeypatch):
    """The last call's plan is found by comparing keys: calls alternating
    shapes, dtypes, dims, keepdim, impl and the environment variable each get
    their own plan (made once), never the previous call's."""
    from portagpu.kernels import reduction

    made = []
    original = reduction._plan
    monkeypatch.setattr(reduction, "_plan", lambda *a: made.append(a[0]) or original(*a))
    _dispatch.forget_plans()
    xs = [torch.randn(4, 6), torch.randn(4, 7), torch.randn(4, 6).double(), torch.randn(6, 4).t()]
    cases = [(1, False), (0, True), (None, False), (-1, True)]
    for _ in range(2):
        for x in xs:
            for dim, keepdim in cases:
                args = () if dim is None else (dim, keepdim)
                torch.testing.assert_close(K.sum(x, *args, impl="torch"), torch.sum(x, *args))
                values = K.max(x, *args, impl="torch")
                expected = torch.max(x, *args)
                torch.testing.assert_close(values if dim is None else tuple(values), expected
                                           if dim is None else tuple(expected))
        monkeypatch.setenv(_dispatch.ENV_IMPL, "torch")  # a new key element for the second pass
    assert len(made) == 2 * 2 * len(xs) * len(cases)  # sum and max, per environment value
    x = xs[0]
    torch.testing.assert_close(K.sum(x, 1, impl="torch"), x.sum(1))
    torch.testing.assert_close(K.sum(x, -1, True, impl="torch"), x.sum(-1, True))
    assert len(made) == 2 * 2 * len(xs) * len(cases)
