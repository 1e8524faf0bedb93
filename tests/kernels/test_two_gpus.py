"""Kernels and launches on the SECOND GPU while the first is current, against
torch (two GPUs; skipped elsewhere, also without portagpu's pytest plugin).

Torch runs an op on its tensors' device, on that device's current stream;
every check here makes cuda:1's current stream a side stream and gives the
call an input that is written on that stream only after a ~25 ms sleep: a
kernel launched on cuda:0, or on cuda:1's default stream, runs before the
input is there and gets a wrong answer (or faults), so a right answer means
the right device and the right stream. Each op is called once before (the
compile is not inside the sleep). The simulated-GPU tests of the same logic
run everywhere: tests/runtime/test_placement.py."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
    pytest.skip("needs two GPUs", allow_module_level=True)

# ruff: noqa: E402
import portagpu.kernels as K
import torch.nn.functional as F  # noqa: N812
import triton
import triton.language as tl

import portagpu
from portagpu.errors import LaunchError

pytestmark = [pytest.mark.gpu, pytest.mark.multi_gpu(2)]
SLEEP_CYCLES = 50_000_000  # ~25 ms at the H200's clock


@pytest.fixture
def side():
    """cuda:0 current, and a side stream as cuda:1's current stream."""
    torch.cuda.set_device(0)
    stream = torch.cuda.Stream(device=1)
    torch.cuda.set_stream(stream)  # (makes cuda:1 current too)
    torch.cuda.set_device(0)
    yield stream
    torch.cuda.set_stream(torch.cuda.default_stream(1))
    torch.cuda.set_device(0)


def late(x):
    """A copy of x written on cuda:1's current stream after a long sleep."""
    copy = torch.zeros_like(x)
    with torch.cuda.device(1):
        torch.cuda._sleep(SLEEP_CYCLES)
    copy.copy_(x)
    return copy


def randn(*shape, dtype=torch.float32):
    generator = torch.Generator(device="cuda:1").manual_seed(sum(shape))
    return torch.randn(*shape, generator=generator, device="cuda:1").to(dtype)


def check(side, op, reference, x, *rest, rtol=1e-4, atol=1e-4):
    """op(x, *rest) on cuda:1 tensors, x written late, equals reference(x, *rest)."""
    expected = reference(x, *rest)
    op(x, *rest)  # compile outside the sleep
    side.synchronize()
    got = op(late(x), *rest)
    assert torch.cuda.current_device() == 0  # the previous device is current again
    side.synchronize()
    for g, e in zip(
        got if isinstance(got, tuple) else (got,),
        expected if isinstance(expected, tuple) else (expected,),
        strict=True,
    ):
        assert g.device == e.device == torch.device("cuda:1")
        torch.testing.assert_close(g, e, rtol=rtol, atol=atol)


def test_add(side):
    y = randn(100_003)
    check(side, lambda x: K.add(x, y), lambda x: x + y, randn(100_003))
    assert K.last_impl() == "triton"


@pytest.mark.parametrize("impl", ["triton", "cuda"])
def test_sum_and_max(side, impl):
    x = randn(4096, 1024)
    check(side, lambda x: K.sum(x, impl=impl), torch.sum, x, rtol=1e-4, atol=1e-2)
    check(side, lambda x: K.sum(x, -1, impl=impl), lambda x: x.sum(-1), x, atol=1e-3)
    check(side, lambda x: K.max(x, impl=impl), torch.max, x)
    assert K.last_impl() == impl


def test_max_along_a_dim(side):
    check(side, lambda x: tuple(K.max(x, -1)), lambda x: tuple(torch.max(x, -1)), randn(300, 5000))


@pytest.mark.parametrize("dim", [-1, 0])
def test_softmax(side, dim):
    check(side, lambda x: K.softmax(x, dim), lambda x: torch.softmax(x, dim), randn(4096, 1024))
    assert K.last_impl() == "triton"


@pytest.mark.parametrize("cols", [1024, 40_000])  # one block per row; a looped row
def test_layer_norm(side, cols):
    weight, bias = randn(cols, dtype=torch.float16), randn(cols, dtype=torch.float16)
    check(
        side,
        lambda x: K.layer_norm(x, cols, weight, bias),
        lambda x: F.layer_norm(x, (cols,), weight, bias),
        randn(64, cols, dtype=torch.float16),
        rtol=1e-2,
        atol=1e-2,
    )
    assert K.last_impl() == "triton"


@pytest.mark.parametrize("impl", ["triton", "cuda"])
def test_cumsum(side, impl):
    check(
        side,
        lambda x: K.cumsum(x, impl=impl),
        lambda x: torch.cumsum(x, -1),
        randn(64, 10_000),
        rtol=1e-4,
        atol=1e-2,
    )
    assert K.last_impl() == impl


@pytest.mark.parametrize("impl", ["triton", "cuda"])
def test_histogram(side, impl):
    def reference(x):
        return torch.bincount(x.long(), minlength=100)

    values = (
        torch.randint(0, 100, (1 << 20,), device="cuda:1").float() + 0.5
    )  # bin centres: exact counts
    check(side, lambda x: K.histogram(x, 100, range=(0.0, 100.0), impl=impl), reference, values)
    assert K.last_impl() == impl


def test_matmul_bias_act_and_matmul(side):
    b, bias = randn(512, 256, dtype=torch.float16), randn(256, dtype=torch.float16)
    check(
        side,
        lambda a: K.matmul_bias_act(a, b, bias, "gelu"),
        lambda a: F.gelu(a.float() @ b.float() + bias.float()).half(),
        randn(512, 512, dtype=torch.float16),
        rtol=2e-2,
        atol=2e-2,
    )
    assert K.last_impl() == "triton"
    check(side, lambda a: K.matmul(a, b), lambda a: a @ b, randn(512, 512, dtype=torch.float16))


def test_the_first_gpu_while_the_second_is_current():
    torch.cuda.set_device(1)
    try:
        x = torch.randn(256, 1000, device="cuda:0")
        torch.testing.assert_close(K.softmax(x), torch.softmax(x, -1))
        assert torch.cuda.current_device() == 1
    finally:
        torch.cuda.set_device(0)


# --- portagpu.launch: Triton kernels and CudaKernel --------------------------------
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3.0, mask=mask)


SCALE_SOURCE = r"""
extern "C" __global__ void scale(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3.0f * x[i];
}
"""


def launch_triton(x):
    out = torch.empty_like(x)
    portagpu.launch(scale_kernel, (triton.cdiv(x.numel(), 1024),), x, out, x.numel(), BLOCK=1024)
    return out


SCALE = portagpu.CudaKernel(SCALE_SOURCE, "scale")


def launch_cuda(x):
    out = torch.empty_like(x)
    portagpu.launch(SCALE, (triton.cdiv(x.numel(), 256),), x, out, x.numel(), block=256)
    return out


@pytest.mark.parametrize("launch", [launch_triton, launch_cuda])
def test_a_launch_runs_on_its_tensors_gpu(side, launch):
    check(side, launch, lambda x: x * 3.0, randn(1 << 20))


@pytest.mark.parametrize("launch", [launch_triton, launch_cuda])
def test_tensors_on_two_gpus_are_a_launch_error(launch):
    x = torch.randn(1024, device="cuda:0")
    out = torch.empty(1024, device="cuda:1")
    kernel = scale_kernel if launch is launch_triton else portagpu.CudaKernel(SCALE_SOURCE, "scale")
    options = {"BLOCK": 1024} if launch is launch_triton else {"block": 256}
    message = (
        r"different GPUs \(cuda:0: x_ptr; cuda:1: out_ptr\)"
        if launch is launch_triton
        else r"argument 1 `[^`]* out` is on cuda:1, other arguments on cuda:0"
    )
    for _ in range(2):
        with pytest.raises(LaunchError, match=message):
            portagpu.launch(kernel, (4,), x, out, 1024, **options)
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)  # nothing was launched that faults
