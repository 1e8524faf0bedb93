"""Issue 13 items 11 and 13: every kernel, on every implementation that can
run here, gives torch's answer for empty and one-element inputs, and torch's
NaN/inf semantics in every reduction and scan (max propagates NaN; max along
a dim returns the first NaN's index; histogram ignores NaN in an explicit
range and refuses a non-finite automatic one).

On the CPU, "triton" runs in Triton's interpreter; the GPU params run where
there is one (`gpu` marker)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import portagpu.kernels as K  # noqa: E402
from portagpu.kernels import _dispatch  # noqa: E402

from portagpu.device import device_of  # noqa: E402
from portagpu.errors import LaunchError  # noqa: E402

NAN, INF = float("nan"), float("inf")
F = torch.nn.functional


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request):
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.skip("no GPU")
    return request.param


IMPLS = ["torch", "triton", "cuda"]


def _runs(impl: str, device: str) -> None:
    why = _dispatch.unavailable(impl, device_of(torch.empty(0, device=device)))
    if why:
        pytest.skip(f"{impl} on {device}: {why}")


# name -> (portagpu call, torch reference); x is the input tensor
KERNELS = {
    "add": (lambda x, i: K.add(x, x, impl=i), lambda x: torch.add(x, x)),
    "sum": (lambda x, i: K.sum(x, impl=i), torch.sum),
    "sum_dim0": (lambda x, i: K.sum(x, dim=0, impl=i), lambda x: torch.sum(x, 0)),
    "sum_dim-1": (lambda x, i: K.sum(x, dim=-1, impl=i), lambda x: torch.sum(x, -1)),
    "max": (lambda x, i: K.max(x, impl=i), torch.max),
    "max_dim-1": (lambda x, i: K.max(x, dim=-1, impl=i), lambda x: torch.max(x, -1)),
    "max_dim0": (lambda x, i: K.max(x, dim=0, impl=i), lambda x: torch.max(x, 0)),
    "softmax": (lambda x, i: K.softmax(x, dim=-1, impl=i), lambda x: torch.softmax(x, -1)),
    "layer_norm": (
        lambda x, i: K.layer_norm(x, (x.shape[-1],), impl=i),
        lambda x: F.layer_norm(x, (x.shape[-1],)),
    ),
    "histogram": (lambda x, i: K.histogram(x, bins=4, impl=i), lambda x: torch.histc(x, 4).long()),
    "histogram_range": (
        lambda x, i: K.histogram(x, bins=4, range=(-2.0, 2.0), impl=i),
        lambda x: torch.histc(x, 4, min=-2.0, max=2.0).long(),
    ),
    "cumsum": (lambda x, i: K.cumsum(x, impl=i), lambda x: torch.cumsum(x, -1)),
    "matmul": (lambda x, i: K.matmul(x, x.T), lambda x: x @ x.T),
    "matmul_bias_act": (
        lambda x, i: K.matmul_bias_act(x, x.T, torch.ones(x.shape[0], device=x.device), impl=i),
        lambda x: F.gelu(x @ x.T + torch.ones(x.shape[0], device=x.device)),
    ),
}
SHAPES = [(0,), (1,), (0, 3), (3, 0), (1, 1), (2, 1), (1, 5)]


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except (RuntimeError, IndexError, ValueError, LaunchError) as exc:
        return None, exc


def _same(got, ref) -> bool:
    if isinstance(ref, tuple):  # torch.return_types: values, indices
        return all(_same(g, r) for g, r in zip(got, ref, strict=True))
    got = got.detach().cpu()
    ref = ref.detach().cpu()
    if got.shape != ref.shape or got.dtype.is_floating_point != ref.dtype.is_floating_point:
        return False
    if not ref.dtype.is_floating_point:
        return torch.equal(got.long(), ref.long())
    return torch.allclose(got.double(), ref.double(), rtol=1e-5, atol=1e-6, equal_nan=True)


def _check(name: str, x, impl: str) -> None:
    call, reference = KERNELS[name]
    if x.ndim != 2 and name in ("matmul", "matmul_bias_act"):
        pytest.skip("2-D only")
    ref, ref_error = _outcome(reference, x)
    got, error = _outcome(call, x, impl)
    if isinstance(error, LaunchError) and "has no" in str(error):
        pytest.skip(str(error))  # this kernel has no such implementation
    if ref_error is not None:
        assert error is not None, (
            f"{name}{tuple(x.shape)} impl={impl}: torch raises {ref_error!r}, got {got}"
        )
        return
    assert error is None, f"{name}{tuple(x.shape)} impl={impl}: {error!r}"
    assert _same(got, ref), f"{name}{tuple(x.shape)} impl={impl}:\n got {got}\n ref {ref}"


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", KERNELS)
def test_empty_and_one_element(device, impl, shape, name):
    _runs(impl, device)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(7)).to(device)
    _check(name, x, impl)


NAN_ROWS = torch.tensor(
    [
        [1.0, NAN, 3.0, NAN],
        [INF, 1.0, INF, 2.0],
        [-INF, -INF, -INF, -INF],
        [NAN, NAN, 1.0, 2.0],
        [2.0, 5.0, 5.0, -1.0],
        [1.0, 2.0, 3.0, NAN],
    ]
)
NAN_CASES = [
    "sum",
    "sum_dim-1",
    "sum_dim0",
    "max",
    "max_dim-1",
    "max_dim0",
    "softmax",
    "layer_norm",
    "cumsum",
    "histogram",
    "histogram_range",
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name", NAN_CASES)
def test_nan_and_inf_follow_torch(device, impl, name):
    _runs(impl, device)
    _check(name, NAN_ROWS.to(device), impl)
    _check(name, NAN_ROWS[0].to(device), impl)  # [1, nan, 3, nan]: the case
    _check(name, NAN_ROWS[3].to(device), impl)


@pytest.mark.parametrize("impl", IMPLS)
def test_max_with_dim_long_rows(device, impl):
    """Rows longer than one block: the first NaN (or first maximum) wins
    wherever it sits."""
    _runs(impl, device)
    x = torch.randn(5, 3000, generator=torch.Generator().manual_seed(3))
    x[1, 2500] = NAN
    x[1, 2999] = NAN
    x[2, 7] = NAN
    x[3, 100] = x[3, 2100] = 50.0
    x[4] = -INF
    _check("max_dim-1", x.to(device), impl)
    _check("max", x.to(device), impl)
    _check("max", x[2].to(device), impl)
