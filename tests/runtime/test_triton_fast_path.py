"""The Triton fast path's cache, on a simulated NVIDIA device with a stand-in
JITFunction (the real one is exercised on the GPU by test_gpu.py and the
benchmark): first launch of a specialisation goes through Triton's dispatch,
later ones call the cached launcher with every argument, and anything that
changes Triton's specialisation goes back through Triton."""

from __future__ import annotations

import pytest
import torch

import portagpu
from portagpu.runtime.dispatch import prepare_launch

from .conftest import JITFunction, kinds, make_device
from .gpu_tensors import OnGpu


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
        lambda x, y: ((x, y, 2**63 + 16), {"BLOCK": 32}),  # n beyond int64: u64
        lambda x, y: ((x, y, True), {"BLOCK": 32}),  # a bool is not the int 1
        lambda x, y: ((x, y, 64.0), {"BLOCK": 32}),  # a float
        lambda x, y: ((x, y, 64), {"BLOCK": 32.0}),  # a constexpr equal in value, not in type
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


def test_parameters_given_by_keyword_take_the_cached_launcher(kernel):
    """Real code passes tensors and sizes by keyword: they are keyed and passed
    in their positions as if given positionally."""
    x, y = torch.zeros(64), torch.zeros(64)
    portagpu.launch(kernel, (2,), x, y=y, n=64, BLOCK=32)
    portagpu.launch(kernel, (2,), y, y=x, n=48, BLOCK=32)
    assert kinds(kernel) == ["native", "fast"]
    assert kernel.log[0][2:] == ((x,), {"y": y, "n": 64, "BLOCK": 32})  # Triton binds them itself
    assert kernel.log[1][1][-5:] == (y, x, 48, 32, 7)
    portagpu.launch(kernel, (2,), y, y=x, n=1, BLOCK=32)  # n == 1 by keyword: Triton's own specialisation
    assert kinds(kernel) == ["native", "fast", "native"]


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


def test_later_launches_run_generated_code_and_keep_the_key(kernel):
    from portagpu.runtime import dispatch

    x, y = torch.zeros(64), torch.zeros(64)
    for n in (64, 64, 48, 48):  # 64 and 48 are both divisible by 16: one specialisation
        portagpu.launch(kernel, (1,), x, y, n, BLOCK=32)
    assert kinds(kernel) == ["native", "fast", "fast", "fast"]
    generated = dispatch.triton_launcher(kernel).shapes[3]
    assert "def fast_launch" in generated.source
    portagpu.launch(kernel, (1,), x, y, 40, BLOCK=32)  # 40 is not: a new specialisation
    assert kinds(kernel)[-1] == "native"
    for _ in range(2):  # another call shape: the general path, with its own cache
        portagpu.launch(kernel, (1,), x, y, 40, BLOCK=32, EXTRA=7)
    assert kinds(kernel)[-2:] == ["native", "fast"]


def test_a_tensor_subclass_or_other_types_take_the_general_path(kernel):
    x, y = torch.zeros(64), torch.zeros(64)
    portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    param = torch.nn.Parameter(torch.zeros(64))
    portagpu.launch(kernel, (1,), param, y, 64, BLOCK=32)  # same specialisation as a Tensor
    assert kinds(kernel) == ["native", "fast"]
    assert kernel.log[-1][1][-5] is param


def test_launch_hooks_get_metadata(kernel):
    from triton import knobs

    chain = knobs.runtime.launch_enter_hook
    if not hasattr(chain, "add"):
        pytest.skip("this Triton's launch hooks are not HookChains")
    x = torch.zeros(64)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    hook = lambda *args: None  # noqa: E731
    chain.add(hook)
    try:
        portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    finally:
        chain.remove(hook)
    launch = kernel.log[-1][1]
    assert kinds(kernel) == ["native", "fast"]
    assert launch[6] == ("metadata", (1,), 1234) and launch[7] is chain
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    assert kernel.log[-1][1][6:9] == (None, None, None)


def test_pre_run_hooks_take_the_general_path(kernel):
    x = torch.zeros(64)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    kernel.pre_run_hooks.append(lambda *args, **kwargs: None)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32)
    assert kinds(kernel) == ["native", "native"]


def test_bad_num_warps_is_refused_on_the_fast_path(kernel):
    from portagpu.errors import LaunchError

    x = torch.zeros(64)
    portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32, num_warps=4)
    for bad in (0, True, "4"):
        with pytest.raises(LaunchError, match="num_warps"):
            portagpu.launch(kernel, (1,), x, x, 64, BLOCK=32, num_warps=bad)


def test_gpu_tensors_are_passed_as_their_addresses(kernel):
    x, y = torch.zeros(64).as_subclass(OnGpu), torch.zeros(64).as_subclass(OnGpu)
    portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    assert kinds(kernel) == ["native", "fast"]
    # the addresses the key already read; Triton's launcher would read them again
    assert kernel.log[-1][1][-5:] == (x.data_ptr(), y.data_ptr(), 64, 32, 7)
    cpu = torch.zeros(64)  # same specialisation, but Triton's launcher must check it
    portagpu.launch(kernel, (1,), cpu, y, 64, BLOCK=32)
    assert kernel.log[-1][1][-5:-3] == (cpu, y)


class Wrapper:
    """Stands for Triton's CudaLauncher: __call__ allocates scratch, then calls `launch`."""

    def __init__(self, log: list, scratch: int = 0) -> None:
        self.log = log
        self.global_scratch_size, self.profile_scratch_size = scratch, 0
        self.launch_cooperative_grid, self.launch_pdl = False, True

    def launch(self, *args):
        self.log.append(("direct", args))

    def __call__(self, *args):
        self.log.append(("fast", args))


@pytest.mark.parametrize("scratch", [0, 128])
def test_a_known_wrapper_is_bypassed_when_no_scratch_is_needed(kernel, monkeypatch, scratch):
    from portagpu.runtime import triton_direct

    monkeypatch.setitem(triton_direct.KNOWN_WRAPPERS, triton_direct.wrapper_digest(Wrapper), "test")
    triton_direct._known.cache_clear()
    original = kernel.__getitem__

    def getitem(grid):
        def native(*args, **kwargs):
            compiled = original(grid)(*args, **kwargs)
            compiled.run = Wrapper(kernel.log, scratch)
            return compiled

        return native

    monkeypatch.setattr(JITFunction, "__getitem__", lambda self, grid: getitem(grid))
    x = torch.zeros(64).as_subclass(OnGpu)
    try:
        portagpu.launch(kernel, (2,), x, x, 64, BLOCK=32)
        portagpu.launch(kernel, (2,), x, x, 64, BLOCK=32)
    finally:
        triton_direct._known.cache_clear()
    if scratch:  # the wrapper allocates scratch: it must be called
        assert kinds(kernel) == ["native", "fast"]
        return
    assert kinds(kernel) == ["native", "direct"]
    launch = kernel.log[-1][1]
    # grid, stream, function, cooperative, pdl, no scratch, packed metadata, no hooks, arguments
    assert launch[:4] == (2, 1, 1, 1234) and launch[5:9] == (False, True, None, None)
    assert launch[10:13] == (None, None, None)
    assert launch[13:] == (x.data_ptr(), x.data_ptr(), 64, 32, 7)


def test_an_unknown_wrapper_is_called():
    from portagpu.runtime import triton_direct

    triton_direct._known.cache_clear()
    assert triton_direct.direct_launch(Wrapper([])) is None
    assert triton_direct.direct_launch(object()) is None


def test_a_prepared_launch_keys_only_its_tensors(kernel):
    """prepare_launch (portagpu.kernels, per call shape): n and the constexprs
    are constants of the code; the tensors are keyed by dtype and alignment."""
    from portagpu.runtime.dispatch import prepare_launch

    go = prepare_launch(kernel, (4,), (None, None, 48), (0, 1), num_warps=4, meta={"BLOCK": 32})
    x, y = torch.zeros(64).as_subclass(OnGpu), torch.zeros(64).as_subclass(OnGpu)
    go(x, y)
    go(y, x)
    assert kinds(kernel) == ["native", "fast"]
    assert kernel.log[0][1:] == ((4,), (x, y, 48), {"BLOCK": 32, "num_warps": 4})
    assert kernel.log[1][1][:4] == (4, 1, 1, 1234)
    assert kernel.log[1][1][-5:] == (y.data_ptr(), x.data_ptr(), 48, 32, 7)
    go(x.half(), y)  # another dtype: Triton compiles it
    go(x[1:], y)  # another alignment
    assert kinds(kernel)[2:] == ["native", "native"]
    assert "bound_launch(p0, p1)" in go.source


def test_a_prepared_launch_falls_back_where_it_must(kernel, use_device):
    from portagpu.runtime.dispatch import prepare_launch

    go = prepare_launch(kernel, (1,), (None, None, 16), (0, 1), meta={"BLOCK": 32})
    x = torch.zeros(64).as_subclass(OnGpu)
    go(x, x)
    go(x, x)
    assert kinds(kernel) == ["native", "fast"]
    kernel.pre_run_hooks.append(lambda *args, **kwargs: None)
    go(x, x)  # Triton must run its hooks: its own dispatch
    kernel.pre_run_hooks.clear()
    use_device("sm_90")  # the device layer detects anew: back through portagpu.launch
    go(x, x)
    assert kinds(kernel)[2:] == ["native", "native"]
    go(x, "not a tensor")  # not keyable: Triton's own dispatch (which would raise)
    assert kernel.log[-1][0] == "native" and kernel.log[-1][2][1] == "not a tensor"


def test_a_launch_prepared_for_a_named_device_outlives_a_new_detection(kernel, use_device):
    """portagpu.kernels names the tensors' device: what detect() says does not
    change its launches, so a plan made before the first detection (or before
    portagpu.distributed.init binds a device) keeps its generated code."""
    go = prepare_launch(kernel, (1,), (None, None, 16), (0, 1), meta={"BLOCK": 32},
                        device=make_device("cuda", "sm_90", 32), trusted=True)
    x = torch.zeros(64).as_subclass(OnGpu)
    go(x, x)
    use_device("sm_90")  # the device layer detects anew
    go(x, x)
    assert kinds(kernel) == ["native", "fast"]
    assert "detection_count" not in go.source


def test_a_trusted_prepared_launch_keys_the_device_and_alignment(kernel):
    """trusted=True (portagpu.kernels: a plan per dtype and device): the key is
    the current device and the tensors' alignment; dtypes and is_cuda are not
    read again, alignment still picks another specialisation."""
    from portagpu.runtime.dispatch import prepare_launch

    go = prepare_launch(kernel, (4,), (None, None, 48), (0, 1), num_warps=4, meta={"BLOCK": 32}, trusted=True)
    x, y = torch.zeros(64).as_subclass(OnGpu), torch.zeros(64).as_subclass(OnGpu)
    go(x, y)
    go(y, x)
    assert kinds(kernel) == ["native", "fast"]
    assert kernel.log[1][1][-5:] == (y.data_ptr(), x.data_ptr(), 48, 32, 7)
    assert ".dtype" not in go.source and ".is_cuda" not in go.source
    go(x[1:], y)  # misaligned: Triton compiles that specialisation
    go(x[1:], y)
    assert kinds(kernel)[2:] == ["native", "fast"]
    go(x, "not a tensor")  # still refused to the general path
    assert kernel.log[-1][0] == "native" and kernel.log[-1][2][1] == "not a tensor"


def test_the_last_hit_is_remembered_but_each_key_keeps_its_entry(kernel, monkeypatch):
    """Generated code keeps its last hit (key and entry) to skip the dict
    lookup; alternating specialisations still launch their own kernels."""
    functions = {}  # BLOCK -> the compiled kernel's function
    original = JITFunction.__getitem__

    def getitem(self, grid):
        def native(*args, **kwargs):
            compiled = original(self, grid)(*args, **kwargs)
            functions[kwargs["BLOCK"]] = compiled.function
            return compiled

        return native

    monkeypatch.setattr(JITFunction, "__getitem__", getitem)
    x = torch.zeros(64).as_subclass(OnGpu)
    blocks = (32, 64, 32, 64, 64, 32)
    for block in blocks:
        portagpu.launch(kernel, (1,), x, x, 64, BLOCK=block)
    assert kinds(kernel) == ["native", "native", "fast", "fast", "fast", "fast"]
    launched = [launch[4] for kind, launch in kernel.log[2:]]  # the function each fast launch ran
    assert launched == [functions[block] for block in blocks[2:]]


def test_with_one_gpu_the_generated_code_asks_for_no_current_device(kernel, gpus, monkeypatch):
    """torch sees one GPU: index 0 is always current, so portagpu.launch's code
    and prepared launches do not ask torch (~0.1 us a launch), and launch on
    device 0's stream, with the key and fallbacks they had."""
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    asked = []
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: asked.append(0) or 0)
    x, y = torch.zeros(64).as_subclass(OnGpu), torch.zeros(64).as_subclass(OnGpu)
    go = prepare_launch(kernel, (4,), (None, None, 48), (0, 1), meta={"BLOCK": 32},
                        device=make_device("cuda", "sm_90", 32), trusted=True)
    for _ in range(2):
        portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
        go(x, y)
    asked.clear()
    portagpu.launch(kernel, (1,), x, y, 64, BLOCK=32)
    go(y, x)
    assert asked == [] and kinds(kernel) == ["native", "native", "fast", "fast", "fast", "fast"]
    assert [entry[1][3] for entry in kernel.log[2:]] == [1234] * 4  # device 0's stream
    assert kernel.log[-1][1][-5:] == (y.data_ptr(), x.data_ptr(), 48, 32, 7)
    go(x[1:], y)  # another alignment: still Triton's to compile
    assert kinds(kernel)[-1] == "native"
