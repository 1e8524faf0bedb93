"""Recording launches: plain kernel[grid](...), portagpu.launch (32-thread warp units,
original dtypes), autotuned kernels (every config) and CUDA C kernels. On a CPU
runner the kernels run in Triton's interpreter and nothing is compiled; the
portagpu.launch tests also run on the session's GPU (--portagpu-device), where
launches take the generated fast path and must still be recorded."""

import pytest

from portagpu.kernelcheck.check import options_for
from portagpu.kernelcheck.record import Recorder
from portagpu.kernelcheck.targets import resolve

torch = pytest.importorskip("torch")
pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")


def on_cpu(kernel):
    """What `kernel[grid](...)` is on a CPU runner with TRITON_INTERPRET=1: Triton's
    InterpretedFunction (plus portagpu's context that lets compiled helpers run there)."""
    from portagpu.runtime.triton_interpreter import interpreted

    return interpreted(kernel)


def test_plain_launches_are_recorded_once_per_specialisation_and_patches_are_undone(samples):
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    from portagpu.runtime.triton_interpreter import interpreting

    before = (JITFunction.run, InterpretedFunction.run)
    x = torch.ones(100)
    out = torch.empty(100)
    kernel = on_cpu(samples.add_kernel)
    with Recorder() as recorder, interpreting():
        for _ in range(3):
            kernel[(1,)](x, x, out, 100, BLOCK=128)
        kernel[(1,)](x.half(), x.half(), out.half(), 100, BLOCK=128)
    assert (JITFunction.run, InterpretedFunction.run) == before
    assert torch.equal(out, torch.full((100,), 2.0))  # the launches ran as usual
    specs = list(recorder.specs)
    assert [s.arg_types()["x"] for s in specs] == ["*fp32", "*fp16"]
    file, line = specs[0].origin.rsplit(":", 1)  # where the user's code launched it
    assert file == __file__ and int(line) > 0 and not specs[0].warp_units


def test_portagpu_launch_records_warp_units_and_the_original_dtype(samples, torch_device):
    import portagpu

    # on a CPU the interpreter runs bf16 through float32 copies
    x = torch.ones(64, dtype=torch.bfloat16, device=torch_device)
    with Recorder() as recorder:
        portagpu.launch(
            samples.add_kernel, (1,), x, x, torch.empty_like(x), 64, BLOCK=64, num_warps=8
        )
    (spec,) = recorder.specs
    assert spec.warp_units and spec.options["num_warps"] == 8
    assert spec.arg_types()["x"] == "*bf16"
    # what portagpu.launch would run on each target: the same 256 threads
    assert options_for(spec, resolve("gfx942"))["num_warps"] == 4
    assert options_for(spec, resolve("sm_90"))["num_warps"] == 8


def test_an_autotuned_launch_records_every_config(samples, torch_device):
    import portagpu

    # the interpreter runs the largest config (64x64 tiles, BK=128): inputs sized for it
    a = torch.zeros(64, 128, dtype=torch.float16, device=torch_device)
    b = torch.zeros(128, 64, dtype=torch.float16, device=torch_device)
    with Recorder() as recorder:
        portagpu.launch(
            samples.tiled_dot_kernel, (1,), a, b, torch.zeros(64, 64, device=torch_device), 128
        )
    specs = list(recorder.specs)
    assert [(s.mode, s.config) for s in specs] == [("autotune", "1/2"), ("autotune", "2/2")]


def test_cuda_source_launches_are_recorded_with_their_block(torch_device):
    import portagpu

    source = 'extern "C" __global__ void scale(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2; }'
    kernel = portagpu.CudaKernel(source, "scale", reference=lambda x, n: x.mul_(2))
    x = torch.ones(8, device=torch_device)
    with Recorder() as recorder:
        portagpu.launch(kernel, (1,), x, 8, block=(128,), shared_mem=512)
    (spec,) = recorder.cuda_specs.values()
    assert (spec.name, spec.block, spec.shared_mem) == ("scale", (128, 1, 1), 512)
    assert torch.equal(x.cpu(), torch.full((8,), 2.0))


def test_nested_recorders_own_their_launches(samples, torch_device):
    import portagpu

    x, out = torch.ones(16, device=torch_device), torch.empty(16, device=torch_device)
    with Recorder() as outer:
        portagpu.launch(samples.add_kernel, (1,), x, x, out, 16, BLOCK=16)
        with Recorder() as inner:  # e.g. a pytest session run inside a test
            portagpu.launch(samples.add_kernel, (1,), x, x, out, 16, BLOCK=32)
        portagpu.launch(samples.add_kernel, (1,), x, x, out, 16, BLOCK=64)
    assert [s.constexprs()["BLOCK"] for s in outer.specs] == [16, 64]
    assert [s.constexprs()["BLOCK"] for s in inner.specs] == [32]


def test_a_launch_portagpu_refuses_is_not_recorded(samples):
    import portagpu
    from portagpu.errors import LaunchError

    x = torch.ones(16)
    with Recorder() as recorder:
        with pytest.raises(LaunchError, match="num_warps must be a positive int"):
            portagpu.launch(
                samples.add_kernel, (1,), x, x, torch.empty(16), 16, BLOCK=16, num_warps=0
            )
    assert len(recorder.specs) == 0


def test_a_cuda_launch_portagpu_refuses_is_not_recorded(monkeypatch):
    import portagpu
    from portagpu.errors import LaunchError
    from portagpu.runtime.cuda_source import CudaKernel, launch_dims

    def launch_on_a_gpu(kernel, device, grid, args, block, stream, meta):
        launch_dims(grid, block)  # what _launch checks on a GPU (the CPU runs the reference)

    monkeypatch.setattr(CudaKernel, "_launch", launch_on_a_gpu)
    source = 'extern "C" __global__ void fill(float* x) { x[threadIdx.x] = 1.0f; }'
    kernel = portagpu.CudaKernel(source, "fill")
    with Recorder() as recorder:
        with pytest.raises(LaunchError, match="out of range"):
            portagpu.launch(kernel, (1,), torch.ones(8), block=(2048,))
        portagpu.launch(kernel, (1,), torch.ones(8), block=(256,))
    assert [spec.block for spec in recorder.cuda_specs.values()] == [(256, 1, 1)]
