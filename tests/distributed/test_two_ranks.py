"""Two real processes on this machine's CPU, through gloo: portagpu.distributed.init
in each, a tensor made by a portagpu.kernels call (its Triton kernel, run by
Triton's interpreter here), and an all-reduce of it. CI runs this without a
GPU; on a two-GPU runner the same body runs with device=None (one GPU each)."""

from __future__ import annotations

import pytest

import portagpu  # before triton: the children import this module first
from portagpu.distributed.testing import RankFailure, spawn

N = 1000


def rank_body(info, n):
    import portagpu.kernels as K
    import torch
    import torch.distributed as dist

    x = torch.full((n,), float(info.rank + 1), device=info.torch_device)
    scanned = K.cumsum(x, impl="triton")  # rank r: (r + 1) * [1, 2, ..., n]
    impl = K.last_impl()
    dist.all_reduce(scanned)
    return {
        "rank": info.rank,
        "local_rank": info.local_rank,
        "world": info.world_size,
        "backend": info.backend,
        "library": info.collective_library,
        "detected": portagpu.detect() == info.device,
        "telemetry": portagpu.telemetry().source,
        "same_again": portagpu.distributed.init() is info,
        "impl": impl,
        "sum": scanned.tolist(),
    }


def test_two_gloo_ranks_all_reduce_a_portagpu_kernel_result():
    results = spawn(rank_body, 2, N)
    expected = [3.0 * i for i in range(1, N + 1)]  # (1 + 2) * [1..n]
    for rank, got in enumerate(results):
        assert (got["rank"], got["local_rank"], got["world"]) == (rank, rank, 2)
        assert (got["backend"], got["library"]) == ("gloo", "Gloo")
        assert got["detected"] and got["same_again"] and got["telemetry"]
        assert got["impl"] == "triton"
        assert got["sum"] == expected


def failing_body(info):
    if info.rank == 1:
        raise ValueError("rank one is unhappy")
    return info.rank


def test_a_failing_rank_is_reported_with_its_traceback():
    with pytest.raises(RankFailure, match="(?s)rank 1 failed.*ValueError: rank one is unhappy"):
        spawn(failing_body, 2, timeout=30)


@pytest.mark.multi_gpu(2)
def test_two_gpu_ranks_all_reduce_a_portagpu_kernel_result():
    results = spawn(rank_body, 2, N, device=None)
    assert [r["backend"] for r in results] == ["nccl", "nccl"]
    assert all(r["sum"] == [3.0 * i for i in range(1, N + 1)] for r in results)
