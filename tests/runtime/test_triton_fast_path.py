"""The Triton fast path's cache, on a simulated NVIDIA device with a stand-in
JITFunction (the real one is exercised on the GPU by test_gpu.py and the
benchmark): first launch of a specialisation goes through Triton's dispatch,
later ones call the cached launcher with every argument, and anything that
changes Triton's specialisation goes back through Triton."""

from __future__ import annotations

import types

import pytest
import torch

import portagpu


class FakeCompiled:
    def __init__(self, log: list) -> None:
        self.function, self.packed_metadata = object(), object()
        self.log = log

    def run(self, *launch):
        self.log.append(("fast", launch))


class JITFunction:
    """Stand-in for triton.runtime.jit.JITFunction(x, y, n, BLOCK: constexpr, EXTRA: constexpr=7)."""

    def __init__(self) -> None:
        spec = [("x", False, None), ("y", False, None), ("n", False, None), ("BLOCK", True, None),
                ("EXTRA", True, 7)]
        self.params = [types.SimpleNamespace(name=n, is_constexpr=c, has_default=d is not None, default=d)
                       for n, c, d in spec]
        self.pre_run_hooks: list = []
        self.used_global_vals: dict = {}
        self.log: list = []

    def run(self, *args, **kwargs):  # pragma: no cover - launches go through __getitem__
        raise AssertionError

    def __getitem__(self, grid):
        def native(*args, **kwargs):
            self.log.append(("native", grid, args, kwargs))
            return FakeCompiled(self.log)

        return native


JITFunction.__module__ = "triton.runtime.jit"


@pytest.fixture
def kernel(use_device, monkeypatch):
    use_device("sm_90")
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda index: 1234, raising=False)
    return JITFunction()


def kinds(kernel):
    return [entry[0] for entry in kernel.log]


def test_second_launch_uses_the_cached_launcher(kernel):
    x, y = torch.zeros(64), torch.zeros(64)
    portagpu.launch(kernel, (2,), x, y, 64, BLOCK=32)
    portagpu.launch(kernel, (3, 2), y, x, 48, BLOCK=32)
    assert kinds(kernel) == ["native", "fast"]
    launch = kernel.log[1][1]
    assert launch[:4] == (3, 2, 1, 1234)  # grid padded to 3-D, current stream
    assert launch[-5:] == (y, x, 48, 32, 7)  # every parameter, defaults included


@pytest.mark.parametrize(
    "change",
    [
        lambda x, y: ((x.half(), y, 64), {"BLOCK": 32}),  # dtype
        lambda x, y: ((x[1:], y, 63), {"BLOCK": 32}),  # 16-byte alignment
        lambda x, y: ((x, y, 1), {"BLOCK": 32}),  # n == 1 is specialised
        lambda x, y: ((x, y, 65), {"BLOCK": 32}),  # n not divisible by 16
        lambda x, y: ((x, y, 2**40), {"BLOCK": 32}),  # n beyond int32
        lambda x, y: ((x, y, 64), {"BLOCK": 64}),  # a constexpr value
        lambda x, y: ((x, y, 64), {"BLOCK": 32, "EXTRA": 8}),  # a defaulted constexpr
        lambda x, y: ((x, y, 64), {"BLOCK": 32, "num_stages": 2}),  # an option
    ],
)
def test_a_new_specialisation_goes_through_triton(kernel, change):
    x, y = torch.zeros(64), torch.zeros(64)
    portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    args, meta = change(x, y)
    portagpu.launch(kernel, (1,), *args, **meta)
    assert kinds(kernel) == ["native", "native"]
    portagpu.launch(kernel, (1,), *args, **meta)
    assert kinds(kernel) == ["native", "native", "fast"]


def test_num_warps_is_part_of_the_key(kernel):
    x = torch.zeros(64)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32, num_warps=4)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32, num_warps=8)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32, num_warps=8)
    assert kinds(kernel) == ["native", "native", "fast"]
    assert kernel.log[1][3]["num_warps"] == 8


def test_callable_grid_sees_all_parameters(kernel):
    x = torch.zeros(64)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    portagpu.launch(kernel, lambda p: (p["n"] // p["BLOCK"], p["EXTRA"]), x, x, 64, BLOCK=32)
    assert kernel.log[-1][1][:3] == (2, 7, 1)


def test_changed_global_or_unusual_arguments_use_triton(kernel):
    x = torch.zeros(64)
    portagpu.launch(kernel, (1,), x, x, (1, 2), BLOCK=32)  # a tuple argument
    portagpu.launch(kernel, (1,), x, x, (1, 2), BLOCK=32)
    assert kinds(kernel) == ["native", "native"]
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    scope = {"LIMIT": 1}
    kernel.used_global_vals[("LIMIT", id(scope))] = (1, scope)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    scope["LIMIT"] = 2  # Triton raises on this; portagpu lets it
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    assert kinds(kernel)[-1] == "native"
