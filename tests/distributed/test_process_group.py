"""portagpu.distributed.init/shutdown in this process: the real gloo path on
the CPU, and the GPU vendors' choices with SIMULATED devices (portagpu's
device list replaced, torch.distributed's init_process_group recorded instead
of run): no NVIDIA, AMD or Apple hardware is involved in those."""

from __future__ import annotations

import functools
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

import portagpu
import portagpu.distributed as pgd
from portagpu.device import Device
from portagpu.distributed import process_group
from portagpu.distributed.launch_env import read_launch_env
from portagpu.errors import DistributedError

TORCHRUN = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29555"}


def gpu(backend: str, index: int) -> Device:
    vendor = {"cuda": "nvidia", "rocm": "amd", "mps": "apple"}[backend]
    return Device(vendor, backend, index, f"{vendor} GPU {index}", None, 32, 1, None, "BLAS")


def test_plain_python_is_one_rank_on_gloo():
    info = pgd.init()
    assert (info.rank, info.local_rank, info.world_size) == (0, 0, 1)
    assert (info.backend, info.collective_library) == ("gloo", "Gloo")
    assert info.device == portagpu.devices()[0] and info.torch_device == "cpu" and info.is_main
    assert dist.is_initialized() and dist.get_backend() == "gloo"
    x = torch.arange(4.0)
    dist.all_reduce(x)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert pgd.init() is info and pgd.current() is info  # idempotent
    assert pgd.init(backend="gloo") is info
    with pytest.raises(DistributedError, match="shutdown"):
        pgd.init(backend="mpi")
    pgd.shutdown()
    assert not dist.is_initialized() and pgd.current() is None
    pgd.shutdown()  # a second call does nothing


def test_a_group_started_elsewhere_is_adopted_not_destroyed():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        info = pgd.init()
        assert info.backend == "gloo" and info.world_size == 1
        pgd.shutdown()
        assert dist.is_initialized()  # not ours to destroy
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RANK": "0"}, "LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT not set"),
        ({"RANK": "x", "LOCAL_RANK": "0", "WORLD_SIZE": "2", **TORCHRUN}, "RANK='x' is not"),
        ({"RANK": "2", "LOCAL_RANK": "0", "WORLD_SIZE": "2", **TORCHRUN}, "inconsistent"),
    ],
)
def test_a_broken_launch_environment_says_what_is_missing(env, message):
    with pytest.raises(DistributedError, match=message):
        read_launch_env(env)


def test_timeout_must_be_positive():
    with pytest.raises(DistributedError, match="timeout"):
        pgd.init(timeout=-1)
    assert process_group._timedelta(90) == timedelta(seconds=90)


def launch(monkeypatch, rank: int, world: int, found: list[Device]) -> list[dict]:
    """Run init() as rank `rank` of `world` on simulated devices; returns the
    keyword arguments init_process_group received (it is not really called)."""
    for name, value in {"RANK": rank, "LOCAL_RANK": rank, "WORLD_SIZE": world, **TORCHRUN}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.setattr(process_group, "devices", lambda: found)
    calls: list[dict] = []

    @functools.wraps(dist.init_process_group)  # keeps its signature (device_id=)
    def record(**options):
        calls.append(options)

    monkeypatch.setattr(dist, "init_process_group", record)
    monkeypatch.setattr(dist, "is_backend_available", lambda name: True)
    bound: list[int] = []
    monkeypatch.setattr(torch.accelerator, "set_device_index", bound.append)
    calls.append({"bound": bound})
    return calls


@pytest.mark.parametrize(("backend", "library"), [("cuda", "NCCL"), ("rocm", "RCCL")])
def test_each_gpu_rank_binds_its_device_and_nccl(monkeypatch, backend, library):
    found = [gpu(backend, 0), gpu(backend, 1)]
    calls = launch(monkeypatch, 1, 2, found)
    info = pgd.init(timeout=30)
    bound, options = calls[0]["bound"], calls[1]
    assert (info.rank, info.world_size, info.device) == (1, 2, found[1])
    assert (info.backend, info.collective_library) == ("nccl", library)
    assert bound == [1]  # torch's current device
    assert options["backend"] == "nccl" and options["device_id"] == torch.device("cuda", 1)
    assert (options["rank"], options["world_size"], options["init_method"]) == (1, 2, "env://")
    assert options["timeout"] == timedelta(seconds=30)
    assert portagpu.detect() == found[1]  # portagpu's current device too
    pgd.shutdown()
    assert portagpu.detect() != found[1]


def test_more_ranks_than_gpus_is_refused(monkeypatch):
    launch(monkeypatch, 2, 3, [gpu("cuda", 0), gpu("cuda", 1)])
    with pytest.raises(DistributedError, match="LOCAL_RANK=2.*sees 2.*--nproc-per-node 2"):
        pgd.init()


def test_one_gpu_per_process_through_the_mask(monkeypatch):
    """A launcher gave each rank its own GPU with CUDA_VISIBLE_DEVICES."""
    calls = launch(monkeypatch, 1, 2, [gpu("cuda", 0)])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5")
    info = pgd.init()
    assert info.device.index == 0 and calls[1]["device_id"] == torch.device("cuda", 0)


def test_mps_refuses_several_ranks_unless_gloo_on_the_cpu(monkeypatch):
    calls = launch(monkeypatch, 0, 2, [gpu("mps", 0)])
    with pytest.raises(DistributedError, match='no collective library.*backend="gloo"'):
        pgd.init()
    info = pgd.init(backend="gloo")
    assert (info.backend, info.device.backend) == ("gloo", "cpu")
    assert "device_id" not in calls[-1] and calls[0]["bound"] == []


def test_mps_single_rank_keeps_the_gpu(monkeypatch):
    launch(monkeypatch, 0, 1, [gpu("mps", 0)])
    info = pgd.init()
    assert (info.device.backend, info.backend, info.collective_library) == ("mps", "gloo", "Gloo")


def test_nccl_asked_for_on_the_cpu_is_refused_with_the_fix():
    with pytest.raises(DistributedError, match="backend=\"nccl\" needs.*picks 'gloo'"):
        pgd.init(backend="nccl")


def test_a_torch_build_without_the_backend_is_named(monkeypatch):
    launch(monkeypatch, 0, 1, [gpu("cuda", 0)])
    monkeypatch.setattr(dist, "is_backend_available", lambda name: name != "nccl")
    with pytest.raises(DistributedError, match="has no 'nccl' backend"):
        pgd.init()


def test_importing_portagpu_distributed_imports_no_torch():
    import subprocess
    import sys

    code = "import sys, portagpu.distributed; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
