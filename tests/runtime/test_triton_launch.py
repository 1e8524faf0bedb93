"""Triton kernels through portagpu.launch on the detected device: Triton's
interpreter on a CPU-only host, the GPU on a GPU host. Fresh random inputs,
outputs poisoned with NaN before each launch, results checked against torch."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

import portagpu
from portagpu.errors import LaunchError

DEVICE = portagpu.detect()
WHERE = DEVICE.torch_device
# few, large programs on the interpreter (its cost grows with the program count)
BLOCK = 1024 if DEVICE.is_gpu else 4096


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * alpha, mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * stride + offsets, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + offsets, e / tl.sum(e, axis=0), mask=mask)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}, num_warps=2), triton.Config({"BLOCK": 2048}, num_warps=4)],
    key=["n"],
)
@triton.jit
def tuned_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


def poisoned(like: torch.Tensor) -> torch.Tensor:
    return torch.full_like(like, float("nan"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("n", [1, 1000, 5003])
def test_vector_add_matches_torch(dtype, n):
    x = torch.randn(n, device=WHERE).to(dtype)
    y = torch.randn(n, device=WHERE).to(dtype)
    out = poisoned(x)
    portagpu.launch(add_kernel, (triton.cdiv(n, BLOCK),), x, y, out, n, BLOCK=BLOCK, num_warps=4)
    torch.testing.assert_close(out, x + y)


def test_repeated_launches_see_new_arguments():
    """The cached fast path must use each call's pointers and scalars."""
    for n in (3000, 3000, 17, 4096, 3000):
        x = torch.randn(n, device=WHERE)
        y = torch.randn(n, device=WHERE)
        out = poisoned(x)
        portagpu.launch(add_kernel, (triton.cdiv(n, BLOCK),), x, y, out, n, BLOCK=BLOCK)
        torch.testing.assert_close(out, x + y)


def test_misaligned_views_and_float_scalar():
    base = torch.randn(4099, device=WHERE)
    for start in (0, 1, 3):  # data_ptr alignment changes Triton's specialisation
        x = base[start:start + 4000]
        out = poisoned(x)
        alpha = float(torch.rand(()).item()) + 0.5
        portagpu.launch(scale_kernel, (triton.cdiv(4000, BLOCK),), x, out, alpha, 4000, BLOCK=BLOCK)
        torch.testing.assert_close(out, x * alpha)


def test_grid_callable_and_keyword_arguments():
    n = 3000
    x, y = torch.randn(n, device=WHERE), torch.randn(n, device=WHERE)
    out = poisoned(x)
    portagpu.launch(add_kernel, lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),),
                    x, y, out_ptr=out, n=n, BLOCK=BLOCK)
    torch.testing.assert_close(out, x + y)


def test_softmax_rows():
    rows, cols = 4, 100
    x = torch.randn(rows, cols, device=WHERE)
    out = poisoned(x)
    portagpu.launch(softmax_kernel, (rows,), x, out, x.stride(0), cols, BLOCK=128)
    torch.testing.assert_close(out, torch.softmax(x, dim=1))


def test_bf16_is_computed_correctly():
    n = 3000
    x = torch.randn(n, device=WHERE).bfloat16()
    y = torch.randn(n, device=WHERE).bfloat16()
    out = poisoned(x)
    portagpu.launch(add_kernel, (triton.cdiv(n, BLOCK),), x, y, out, n, BLOCK=BLOCK)
    torch.testing.assert_close(out, (x.float() + y.float()).bfloat16())


def test_multi_config_autotune_runs():
    n = 5000
    x, y = torch.randn(n, device=WHERE), torch.randn(n, device=WHERE)
    out = poisoned(x)
    portagpu.launch(tuned_add_kernel, lambda meta: (triton.cdiv(n, meta["BLOCK"]),), x, y, out, n)
    torch.testing.assert_close(out, x + y)


def test_not_a_kernel_is_refused():
    with pytest.raises(LaunchError, match="triton.jit kernel or a portagpu.CudaKernel"):
        portagpu.launch(lambda x: x, (1,), 1)


def test_block_is_refused_for_triton():
    x = torch.zeros(4, device=WHERE)
    with pytest.raises(LaunchError, match="num_warps"):
        portagpu.launch(add_kernel, (1,), x, x, x, 4, BLOCK=16, block=(128,))


@pytest.mark.parametrize("bad", [0, -4, 2.0, True])
def test_bad_num_warps_is_refused(bad):
    x = torch.zeros(4, device=WHERE)
    with pytest.raises(LaunchError, match="num_warps"):
        portagpu.launch(add_kernel, (1,), x, x, x, 4, BLOCK=16, num_warps=bad)


@triton.jit
def _twice(x):
    return x * 2


@pytest.mark.skipif(DEVICE.is_gpu, reason="the interpreter is only used without a GPU")
def test_a_compiled_kernel_runs_in_the_interpreter_per_launch(monkeypatch):
    """TRITON_INTERPRET plays no part: a kernel decorated as a JITFunction runs
    in the interpreter, with its @triton.jit helper and tl.* reductions and scans
    (JITFunctions too), called both ways (tl.sum(x), x.max())."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)

    @triton.jit
    def compiled_kernel(x_ptr, out_ptr, stats_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(out_ptr + offsets, tl.cumsum(_twice(x), 0), mask=mask)
        tl.store(stats_ptr, tl.sum(x, axis=0))
        tl.store(stats_ptr + 1, x.max())

    assert type(compiled_kernel).__name__ == "JITFunction"
    x = torch.rand(100)
    out, stats = torch.full((100,), float("nan")), torch.full((2,), float("nan"))
    portagpu.launch(compiled_kernel, (1,), x, out, stats, 100, BLOCK=128)
    torch.testing.assert_close(out, torch.cumsum(2 * x, 0))
    torch.testing.assert_close(stats, torch.stack([x.sum(), x.max()]))
    # the patches that let it call compiled functions are gone afterwards
    with pytest.raises(RuntimeError, match="outside of the scope of a kernel"):
        _twice(x)
