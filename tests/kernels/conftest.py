"""Shared fixtures for the kernel tests.

Every test runs on the CPU (Triton's interpreter, CPU fallbacks) and again on a
GPU when there is one (`gpu` marker; skipped elsewhere). Inputs are fresh random
numbers per check, from a seed printed on failure; outputs that a kernel must
write are pre-filled with NaN so an element it skips fails the comparison.
"""

from __future__ import annotations

import secrets

import pytest

torch = pytest.importorskip("torch")

HAS_GPU = torch.cuda.is_available()

# relative error allowed vs the float64 reference, by the dtype of the inputs
TOLERANCE = {torch.float32: 1e-5, torch.float16: 5e-3, torch.bfloat16: 1e-2}


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request: pytest.FixtureRequest) -> str:
    if request.param == "cuda" and not HAS_GPU:
        pytest.skip("no GPU")
    return request.param


class Inputs:
    """Fresh random tensors on one device, and the comparisons the tests make."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.seed = secrets.randbits(31)
        self.generator = torch.Generator().manual_seed(self.seed)

    def randn(self, *shape: int, dtype=torch.float32, scale: float = 1.0):
        values = torch.randn(*shape, generator=self.generator, dtype=torch.float64) * scale
        return values.to(dtype).to(self.device)

    def randint(self, low: int, high: int, *shape: int):
        return torch.randint(low, high, shape, generator=self.generator).to(self.device)

    def poisoned(self, *shape: int, dtype=torch.float32):
        return torch.full(shape, float("nan"), dtype=dtype, device=self.device)

    def assert_close(self, got, reference, dtype, what: str = "") -> None:
        """Norm-wise relative error of `got` against a float64 `reference`."""
        got64 = got.detach().to("cpu", torch.float64)
        ref64 = reference.detach().to("cpu", torch.float64)
        assert got64.shape == ref64.shape, f"{what}: shape {tuple(got64.shape)} != {tuple(ref64.shape)}"
        unwritten = int((~torch.isfinite(got64)).sum())
        assert unwritten == 0, f"{what}: {unwritten} elements not finite (unwritten?), seed {self.seed}"
        error = float((got64 - ref64).norm() / ref64.norm().clamp_min(1e-30))
        assert error < TOLERANCE[dtype], f"{what}: relative error {error:.3g} (seed {self.seed})"


@pytest.fixture
def inputs(device: str) -> Inputs:
    return Inputs(device)


@pytest.fixture
def runnable(device: str):
    """runnable(impl) -> impl when it can run on this device, else the test is skipped
    (None means the device's default and always runs)."""
    from portagpu.kernels import _dispatch

    from portagpu.device import device_of

    where = device_of(torch.empty(0, device=device))

    def check(impl: str | None) -> str | None:
        why = impl and _dispatch.unavailable(impl, where)
        if why:
            pytest.skip(f"{impl} on {device}: {why}")
        return impl

    return check
