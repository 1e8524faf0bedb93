"""portagpu.matmul on the arrays' own device and framework, and last_backend()."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import portagpu
from portagpu.errors import LaunchError

WHERE = portagpu.detect().torch_device


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_torch_matmul_matches_and_reports_library(dtype):
    a = torch.randn(64, 48, device=WHERE).to(dtype)
    b = torch.randn(48, 32, device=WHERE).to(dtype)
    result = portagpu.matmul(a, b)
    expected = (a.double() @ b.double()).to(dtype)
    torch.testing.assert_close(result, expected, rtol=2e-2, atol=2e-2)
    call = portagpu.last_backend()
    assert call.framework == "torch" and call.device == str(a.device)
    assert call.library == portagpu.backends.backend_for(portagpu.detect()).blas_library("torch")


def test_out_is_written_in_place():
    a, b = torch.randn(16, 8, device=WHERE), torch.randn(8, 4, device=WHERE)
    out = torch.full((16, 4), float("nan"), device=WHERE)
    result = portagpu.matmul(a, b, out=out)
    assert result.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out, a @ b)


def test_numpy_goes_to_cpu_blas():
    a, b = np.random.rand(20, 10), np.random.rand(10, 5)
    out = np.full((20, 5), np.nan)
    portagpu.matmul(a, b, out=out)
    np.testing.assert_allclose(out, a @ b)
    assert portagpu.last_backend().library.startswith("CPU BLAS")
    assert portagpu.last_backend().framework == "numpy"


def test_mixed_frameworks_and_bad_types_are_refused():
    with pytest.raises(LaunchError, match="mixed frameworks"):
        portagpu.matmul(torch.ones(2, 2), np.ones((2, 2)))
    with pytest.raises(LaunchError, match="takes torch tensors"):
        portagpu.matmul([[1.0]], [[1.0]])


def test_last_backend_is_per_thread():
    portagpu.matmul(np.ones((2, 2)), np.ones((2, 2)))
    seen = []
    thread = threading.Thread(target=lambda: seen.append(portagpu.last_backend()))
    thread.start()
    thread.join()
    assert seen == [None]
    assert portagpu.last_backend() is not None


def test_repeated_torch_calls_keep_their_checks_and_report():
    """After one torch call, plain torch tensors take a short path: the
    BlasCall is the same, and anything else (numpy, a subclass, `out=`, a
    tensor on the meta device) still gets the general path's checks."""
    a, b = torch.randn(8, 4, device=WHERE), torch.randn(4, 2, device=WHERE)
    portagpu.matmul(a, b)
    first = portagpu.last_backend()
    portagpu.matmul(np.ones((2, 2)), np.ones((2, 2)))
    torch.testing.assert_close(portagpu.matmul(a, b), a @ b)
    assert portagpu.last_backend() is first
    with pytest.raises(LaunchError, match="mixed frameworks"):
        portagpu.matmul(a, np.ones((4, 2)))
    with pytest.raises(LaunchError, match="different devices"):
        portagpu.matmul(a, torch.randn(4, 2, device="meta"))
    param = torch.nn.Parameter(b)  # a subclass: the general path, same answer
    torch.testing.assert_close(portagpu.matmul(a, param), a @ b)
