"""A torch reference for a Triton kernel (portagpu.reference_for): it runs
where Triton has no GPU backend (CPU, MPS) unless the interpreter is asked
for, and never where Triton runs natively."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

import portagpu
from portagpu.errors import LaunchError


def make_kernel():
    """A fresh kernel per test (the reference is registered per kernel)."""

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * alpha, mask=mask)

    return scale_kernel


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_the_reference_runs_where_triton_is_interpreted(use_device, device):
    use_device(device)
    kernel, calls = make_kernel(), []

    @portagpu.reference_for(kernel)
    def scale(x, out, alpha, n, BLOCK):
        calls.append(BLOCK)
        out[:n] = x[:n] * alpha

    n = 3000
    x, out = torch.randn(n), torch.full((n,), float("nan"))
    portagpu.launch(
        kernel, (triton.cdiv(n, 4096),), x, out, 0.5, n, BLOCK=4096, num_warps=4, num_stages=2
    )
    torch.testing.assert_close(out, x * 0.5)
    assert calls == [4096]  # constexprs by keyword; num_warps and num_stages are launch options


def test_interpret_true_runs_the_kernel_in_the_interpreter(use_device):
    use_device("cpu")
    kernel = make_kernel()
    portagpu.reference_for(kernel, lambda *args, **kwargs: pytest.fail("the reference ran"))
    n = 3000
    x, out = torch.randn(n), torch.full((n,), float("nan"))
    portagpu.launch(kernel, (triton.cdiv(n, 4096),), x, out, 2.0, n, BLOCK=4096, interpret=True)
    torch.testing.assert_close(out, x * 2.0)


def test_a_gpu_that_runs_triton_ignores_the_reference(use_device, monkeypatch):
    """Simulated sm_90: the launch goes to Triton (here a recording stand-in)."""
    use_device("sm_90")
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda index: 0, raising=False)
    kernel, launched = make_kernel(), []
    monkeypatch.setattr(
        type(kernel),
        "__getitem__",
        lambda self, grid: lambda *args, **kwargs: launched.append(grid),
    )
    portagpu.reference_for(kernel, lambda *args, **kwargs: pytest.fail("the reference ran"))
    portagpu.launch(kernel, (1,), torch.zeros(4), torch.zeros(4), 1.0, 4, BLOCK=16, interpret=True)
    assert launched == [(1,)]


def test_a_backend_without_triton_runs_the_reference_or_says_how(use_device, monkeypatch):
    use_device("cpu")
    from portagpu.backends import get_backend

    monkeypatch.setattr(type(get_backend("cpu")), "triton_mode", "none")
    kernel = make_kernel()
    x, out = torch.randn(8), torch.zeros(8)
    with pytest.raises(LaunchError, match="reference_for"):
        portagpu.launch(kernel, (1,), x, out, 3.0, 8, BLOCK=16)
    portagpu.reference_for(kernel, lambda x, out, alpha, n, BLOCK: out.copy_(x * alpha))
    portagpu.launch(kernel, (1,), x, out, 3.0, 8, BLOCK=16)
    torch.testing.assert_close(out, x * 3.0)


def test_bad_references_are_refused():
    kernel = make_kernel()
    with pytest.raises(LaunchError, match="callable"):
        portagpu.reference_for(kernel, 42)
    with pytest.raises(LaunchError, match="CudaKernel takes reference="):
        portagpu.reference_for(portagpu.CudaKernel("__global__ void f() {}", "f"), print)
    with pytest.raises(LaunchError, match="interpret= are for Triton"):
        portagpu.launch(portagpu.CudaKernel("__global__ void f() {}", "f"), 1, interpret=True)
