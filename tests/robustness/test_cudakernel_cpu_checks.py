"""Issue 13 item 15: with no CUDA compiler (CPU, MPS) CudaKernel runs its
reference, but first applies every check the GPU path makes, so CPU CI
rejects what a GPU would: the kernel's name in the source, block <= 1,024
threads, grid limits, argument count and scalar types against the
signature, arrays in the memory the device reads, launch options."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import portagpu  # noqa: E402
from portagpu.errors import LaunchError  # noqa: E402

SOURCE = r"""
extern "C" __global__ void axpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
"""
CALLS: list[tuple] = []


def axpy_reference(x, y, a, n):
    CALLS.append((a, n))
    y[:n] += a * x[:n]


@pytest.fixture
def cpu(monkeypatch):
    monkeypatch.setenv("PORTAGPU_DEVICE", "cpu")
    from portagpu.device import clear_cache

    clear_cache()
    CALLS.clear()
    yield
    clear_cache()


def _kernel(name: str = "axpy") -> portagpu.CudaKernel:
    return portagpu.CudaKernel(SOURCE, name, reference=axpy_reference)


def _args(n: int = 8):
    return torch.ones(n), torch.zeros(n), 2.0, n


def test_a_valid_launch_runs_the_reference(cpu):
    x, y, a, n = _args()
    portagpu.launch(_kernel(), (1,), x, y, a, n, block=(32,))
    assert torch.equal(y, torch.full((n,), 2.0)) and CALLS == [(2.0, 8)]


BAD = {
    "name not in the source": (lambda: (_kernel("axpby"), (1,), _args(), {}), "axpby"),
    "block over 1,024 threads": (lambda: (_kernel(), (1,), _args(), {"block": (2048,)}), "block"),
    "block of 32x32x2 threads": (
        lambda: (_kernel(), (1,), _args(), {"block": (32, 32, 2)}),
        "2048 threads",
    ),
    "grid y over 65,535": (lambda: (_kernel(), (1, 70000), _args(), {}), "grid"),
    "grid of zero": (lambda: (_kernel(), (0,), _args(), {}), "grid"),
    "too few arguments": (lambda: (_kernel(), (1,), _args()[:3], {}), "takes 4 arguments"),
    "float for an int": (lambda: (_kernel(), (1,), (*_args()[:3], 8.0), {}), "integer"),
    "int past int32": (lambda: (_kernel(), (1,), (*_args()[:3], 2**40), {}), "cannot hold"),
    "string for a float": (lambda: (_kernel(), (1,), (*_args()[:2], "2", 8), {}), "scalar"),
    "list for a pointer": (lambda: (_kernel(), (1,), ([1.0] * 8, *_args()[1:]), {}), "pointer"),
    "non-contiguous tensor": (
        lambda: (_kernel(), (1,), (torch.ones(16)[::2], *_args()[1:]), {}),
        "contiguous",
    ),
    "unknown launch option": (
        lambda: (_kernel(), (1,), _args(), {"num_stages": 2}),
        "unknown launch options",
    ),
}


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_the_reference_refuses_what_a_gpu_would(cpu, case):
    make, needle = case
    kernel, grid, args, options = make()
    with pytest.raises(LaunchError, match=needle):
        portagpu.launch(kernel, grid, *args, **options)
    assert CALLS == []  # the reference never ran


def test_numpy_arrays_are_device_memory_only_on_the_cpu(monkeypatch):
    """Host arrays: the CPU reads them (the cupy/numpy duality works), a GPU
    without a CUDA compiler (MPS) does not."""
    from portagpu.device import clear_cache

    kernel = _kernel()
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    monkeypatch.setenv("PORTAGPU_DEVICE", "cpu")
    clear_cache()
    portagpu.launch(kernel, (1,), x, y, 2.0, 8)
    assert y.tolist() == [2.0] * 8
    clear_cache()
