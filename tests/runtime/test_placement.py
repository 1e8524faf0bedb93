"""Which GPU a Triton launch runs on, with two SIMULATED GPUs (conftest's
FakeGpus behind torch's device hooks, CPU tensors that say which GPU they are
on, a stand-in JITFunction that records the current device at each compile and
launch). The real thing on two GPUs: tests/kernels/test_two_gpus.py."""

from __future__ import annotations

import pytest
import torch

import portagpu
from portagpu.errors import LaunchError
from portagpu.runtime import dispatch
from portagpu.runtime.dispatch import prepare_launch

from .conftest import kinds, make_device
from .gpu_tensors import on_gpu

SECOND = make_device("cuda", "sm_90", 32, index=1)  # the plan's device, as device_of(x) gives it


def pair(index: int) -> tuple[torch.Tensor, torch.Tensor]:
    return on_gpu(torch.zeros(64), index), on_gpu(torch.zeros(64), index)


def test_a_trusted_prepared_launch_runs_on_its_device_while_another_is_current(kernel, gpus):
    go = prepare_launch(
        kernel, (4,), (None, None, 48), (0, 1), 4, {"BLOCK": 32}, SECOND, trusted=True
    )
    x, y = pair(1)
    go(x, y)  # device 0 current: compiled for and launched on device 1
    go(x, y)
    assert kinds(kernel) == ["native", "fast"]
    assert kernel.devices == [1, 1]
    assert kernel.log[1][1][3] == 1235  # device 1's current stream
    assert gpus.current == 0 and gpus.switches == [1, 0, 1, 0]  # switched there and back each time


def test_the_common_path_switches_nothing(kernel, gpus):
    """Tensors on the current device: the trusted code's hit path is the code
    it was before devices were compared (the comparison is in the miss branch)."""
    go = prepare_launch(
        kernel, (4,), (None, None, 48), (0, 1), 4, {"BLOCK": 32}, SECOND, trusted=True
    )
    gpus.current = 1
    x, y = pair(1)
    for _ in range(3):
        go(x, y)
    assert kinds(kernel) == ["native", "fast", "fast"] and kernel.devices == [1, 1, 1]
    assert gpus.switches == []
    lines = [line.strip() for line in go.source.splitlines()]
    assert lines.index("if entry is None:") < lines.index("if dev != HOME:")
    assert "get_device()" not in go.source.replace(
        "dev = get_device()", ""
    )  # no tensor's device read


def test_a_plan_for_each_device_keeps_its_own_kernels(kernel, gpus):
    first = prepare_launch(
        kernel,
        (4,),
        (None, None, 48),
        (0, 1),
        4,
        {"BLOCK": 32},
        make_device("cuda", "sm_90", 32),
        trusted=True,
    )
    second = prepare_launch(
        kernel, (4,), (None, None, 48), (0, 1), 4, {"BLOCK": 32}, SECOND, trusted=True
    )
    for _ in range(2):
        first(*pair(0))
        second(*pair(1))
    assert kinds(kernel) == ["native", "native", "fast", "fast"]
    assert kernel.devices == [0, 1, 0, 1] and gpus.current == 0
    assert kernel.log[2][1][4] is not kernel.log[3][1][4]  # each device's own compiled function


def test_preparing_for_another_device_leaves_portagpu_launch_as_it_was(kernel, gpus):
    x, y = pair(0)
    portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    shared = dispatch.triton_launcher(kernel)
    device, shapes = shared.device, shared.shapes
    prepare_launch(kernel, (4,), (None, None, 48), (0, 1), 4, {"BLOCK": 32}, SECOND, trusted=True)(
        *pair(1)
    )
    assert shared.device is device and shared.shapes is shapes  # not reconfigured
    assert dispatch.prepared_launcher(kernel, SECOND) is not shared
    portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    assert kinds(kernel) == ["native", "native", "fast"]  # its generated code still serves it


def test_portagpu_launch_runs_on_its_tensors_gpu(kernel, gpus):
    x, y = pair(1)
    for _ in range(3):
        portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    assert kinds(kernel) == ["native", "fast", "fast"] and kernel.devices == [1, 1, 1]
    assert kernel.log[-1][1][3] == 1235 and gpus.current == 0
    # the same call with device 1 current: no switch
    del gpus.switches[:]
    gpus.current = 1
    portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    assert kinds(kernel)[-1] == "fast" and gpus.switches == []


def test_tensors_on_two_gpus_are_refused_naming_the_devices(kernel, gpus):
    x, y = on_gpu(torch.zeros(64), 0), on_gpu(torch.zeros(64), 1)
    for _ in range(2):  # the general path, then the generated code
        with pytest.raises(
            LaunchError,
            match=r"add: tensor arguments are on different GPUs \(cuda:0: x; cuda:1: y\)",
        ):
            portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
        portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    assert kinds(kernel) == ["native", "fast"] and gpus.switches == []
    go = prepare_launch(kernel, (4,), (None, None, 48), (0, 1), 4, {"BLOCK": 32}, SECOND)
    with pytest.raises(LaunchError, match=r"cuda:0: x; cuda:1: y"):
        go(x, y)


def test_an_untrusted_prepared_launch_follows_its_tensors(kernel, gpus):
    go = prepare_launch(kernel, (4,), (None, None, 48), (0, 1), 4, {"BLOCK": 32})
    go(*pair(0))
    go(*pair(1))
    go(*pair(1))
    assert kernel.devices == [0, 1, 1] and gpus.current == 0
    assert kinds(kernel) == ["native", "native", "fast"]


def test_host_tensors_still_reach_tritons_own_check(kernel, gpus):
    """A tensor in host memory is not moved anywhere: Triton's launcher gets
    it and refuses it, as before."""
    x = on_gpu(torch.zeros(64), 1)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    cpu = torch.zeros(64)
    portagpu.launch(kernel, (1,), x, cpu, 64, BLOCK=32)
    assert kinds(kernel) == ["native", "fast"] and kernel.devices == [1, 1]
    assert kernel.log[-1][1][-4] is cpu  # passed as the tensor, not an address


def test_a_device_that_will_not_switch_is_an_error_not_a_loop(kernel, gpus, monkeypatch):
    monkeypatch.setattr(torch._C, "_cuda_exchangeDevice", lambda index: gpus.current, raising=False)
    go = prepare_launch(
        kernel, (4,), (None, None, 48), (0, 1), 4, {"BLOCK": 32}, SECOND, trusted=True
    )
    with pytest.raises(LaunchError, match="could not make GPU 1 the current device"):
        go(*pair(1))
