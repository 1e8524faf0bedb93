"""CUDA C kernels: argument checks, scalar conversion, compile options and
the reference fallback. NVIDIA and AMD are simulated (conftest.py): a fake
CuPy records what would be compiled and launched."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
import torch

import portagpu
from portagpu.errors import LaunchError

SOURCE = r"""
#include <cuda_runtime.h>
extern "C" __global__ void scale(const float* __restrict__ x, float* out, float alpha,
                                 int n, double beta, unsigned long long seed) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = alpha * x[i] + (float)beta + (float)(seed & 1);
}
extern "C" __global__ void fill(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)WARP_SIZE;
}
"""


# the generated launch code is written for CuPy seeing several GPUs and for one
# (which reads no device: every GPU array is on index 0, which is current)
ONE_OR_TWO_GPUS = pytest.mark.parametrize("gpu_count", [1, 2])


def scale_reference(x, out, alpha, n, beta, seed):
    out[:n] = alpha * x[:n] + beta + (seed & 1)


def test_reference_runs_without_a_cuda_compiler(use_device):
    use_device("cpu")
    n = int(np.random.randint(10, 500))
    x = torch.randn(n)
    out = torch.full((n,), float("nan"))
    kernel = portagpu.CudaKernel(SOURCE, "scale", reference=scale_reference)
    portagpu.launch(kernel, ((n + 127) // 128,), x, out, 0.5, n, 0.25, 3, block=(128,))
    torch.testing.assert_close(out, 0.5 * x + 0.25 + 1)


def test_reference_on_a_gpu_refuses_host_memory(use_device):
    """MPS runs the reference too, but like a CUDA GPU it reads its own
    memory: CPU tensors and numpy arrays are refused before it runs
    (issue 13 item 15: a CPU-only CI must refuse what a GPU would)."""
    use_device("mps")
    kernel = portagpu.CudaKernel(SOURCE, "scale", reference=scale_reference)
    with pytest.raises(LaunchError, match="is a torch tensor on cpu, not on mps"):
        portagpu.launch(kernel, (1,), torch.randn(8), torch.zeros(8), 0.5, 8, 0.25, 3)
    with pytest.raises(LaunchError, match="numpy array in host memory"):
        portagpu.launch(kernel, (1,), np.ones(8, np.float32), torch.zeros(8), 0.5, 8, 0.25, 3)


def test_reference_takes_numpy_arrays(use_device):
    use_device("cpu")
    x = np.random.rand(64).astype(np.float32)
    out = np.full(64, np.nan, dtype=np.float32)
    kernel = portagpu.CudaModule(SOURCE, references={"scale": scale_reference})["scale"]
    portagpu.launch(kernel, (1,), x, out, 2.0, 64, 0.0, 0)
    np.testing.assert_allclose(out, 2.0 * x)


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_without_reference_the_error_names_backends_that_can_run_it(use_device, device):
    use_device(device)
    kernel = portagpu.CudaKernel(SOURCE, "fill")
    with pytest.raises(LaunchError, match=r"CUDA \(NVIDIA\).*ROCm \(AMD\).*reference="):
        portagpu.launch(kernel, (1,), torch.zeros(4), 4)


def test_nvidia_converts_scalars_to_the_declared_types(use_device, fake_cupy):
    use_device("sm_90")
    cupy = fake_cupy(is_hip=False)
    x, out = cupy.ndarray(), cupy.ndarray()
    kernel = portagpu.CudaKernel(SOURCE, "scale", options=("-O3",))
    portagpu.launch(kernel, (4,), x, out, 0.1, 1000, 0.1, 2**40, block=(128,))
    launch = cupy.launches[-1]
    args = launch["args"]
    assert args[0] is x and args[1] is out
    assert type(args[2]) is np.float32 and args[2] == np.float32(0.1)
    assert type(args[3]) is np.int32 and args[3] == 1000
    assert type(args[4]) is np.float64
    assert type(args[5]) is np.uint64 and args[5] == 2**40
    assert launch["grid"] == (4, 1, 1) and launch["block"] == (128, 1, 1)
    assert launch["stream"] is None  # CuPy arrays: CuPy's current stream
    options = cupy.compiled[-1]["options"]
    assert options[0] == "-O3" and "-DWARP_SIZE=32" in options and "-DPORTAGPU_WARP_SIZE=32" in options
    assert cupy.compiled[-1]["code"] == SOURCE


def test_module_compiles_once_per_device_and_options(use_device, fake_cupy):
    use_device("sm_90")
    cupy = fake_cupy()
    module = portagpu.CudaModule(SOURCE)
    for _ in range(3):
        portagpu.launch(module["fill"], 1, cupy.ndarray(), 4)
        portagpu.launch(module["scale"], 1, cupy.ndarray(), cupy.ndarray(), 1.0, 4, 1.0, 1)
    assert len(cupy.compiled) == 1
    portagpu.launch(portagpu.CudaKernel(SOURCE, "fill", options=("-G",)), 1, cupy.ndarray(), 4)
    assert len(cupy.compiled) == 2


@pytest.mark.parametrize(("device", "warp"), [("gfx942", 64), ("gfx1100", 32)])
def test_amd_translates_then_compiles_with_device_warp(use_device, fake_cupy, monkeypatch, device, warp):
    use_device(device)
    cupy = fake_cupy(is_hip=True)
    seen = {}

    def translate(source, *, warp_size=None, engine="auto"):
        seen["warp_size"] = warp_size
        return type("Translation", (), {"text": "// hip\n" + source, "engine": "fake", "report": None})

    bridge = types.ModuleType("portagpu.hipify_bridge")
    bridge.translate = translate
    monkeypatch.setitem(sys.modules, "portagpu.hipify_bridge", bridge)
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    portagpu.launch(portagpu.CudaKernel(SOURCE, "fill"), 1, cupy.ndarray(), 4)
    assert seen["warp_size"] == warp
    compiled = cupy.compiled[-1]
    assert compiled["code"].startswith("// hip\n")
    assert f"-DWARP_SIZE={warp}" in compiled["options"]


def test_amd_without_hipcc_says_so(use_device, fake_cupy, monkeypatch):
    use_device("gfx942")
    cupy = fake_cupy(is_hip=True)
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(LaunchError, match="hipcc"):
        portagpu.launch(portagpu.CudaKernel(SOURCE, "fill"), 1, cupy.ndarray(), 4)


def test_cupy_built_for_the_other_vendor_is_refused(use_device, fake_cupy):
    use_device("sm_90")
    cupy = fake_cupy(is_hip=True)
    with pytest.raises(LaunchError, match="built for ROCm"):
        portagpu.launch(portagpu.CudaKernel(SOURCE, "fill"), 1, cupy.ndarray(), 4)


BAD_LAUNCHES = [
    (lambda c: ((1,), (c.ndarray(),)), "takes 2 arguments"),
    (lambda c: ((0,), (c.ndarray(), 4)), r"grid\[0\] = 0"),
    (lambda c: ((1, 70000), (c.ndarray(), 4)), r"grid\[1\] = 70000"),
    (lambda c: ("1", (c.ndarray(), 4)), "grid must be"),
    (lambda c: ((1,), (np.zeros(4, np.float32), 4)), "numpy array in host memory"),
    (lambda c: ((1,), (torch.zeros(4), 4)), "torch tensor on cpu"),
    (lambda c: ((1,), (c.ndarray(contiguous=False), 4)), "not C-contiguous"),
    (lambda c: ((1,), (c.ndarray(), 2.5)), "integer, got float"),
    (lambda c: ((1,), (c.ndarray(), 2**40)), "cannot hold"),
    (lambda c: ((1,), (c.ndarray(), c.ndarray())), "is a scalar"),
    (lambda c: ((1,), ("x", 4)), "pointer parameter"),
]


@pytest.mark.parametrize("after_a_good_launch", [False, True])
@pytest.mark.parametrize(("make", "message"), BAD_LAUNCHES)
@ONE_OR_TWO_GPUS
def test_bad_launches_are_refused_before_launch(use_device, fake_cupy, gpu_count, make, message, after_a_good_launch):
    """Also once a good launch has made the kernel's generated fast path."""
    use_device("sm_90")
    cupy = fake_cupy(gpus=gpu_count)
    kernel = portagpu.CudaKernel(SOURCE, "fill")
    if after_a_good_launch:
        for _ in range(2):
            portagpu.launch(kernel, (1,), cupy.ndarray(), 4)
        assert "def fast_launch" in kernel._fast.source
        cupy.launches.clear()
    grid, args = make(cupy)
    with pytest.raises(LaunchError, match=message):
        portagpu.launch(kernel, grid, *args)
    assert cupy.launches == []


@ONE_OR_TWO_GPUS
def test_fast_path_converts_scalars_like_the_first_launch(use_device, fake_cupy, gpu_count):
    use_device("sm_90")
    cupy = fake_cupy(gpus=gpu_count)
    kernel = portagpu.CudaKernel(SOURCE, "scale")
    x, out = cupy.ndarray(), cupy.ndarray()
    for alpha, n, beta, seed in [(0.1, 1000, 0.1, 2**40), (0.1, 1000, 0.1, 2**40), (0.0, 7, -0.0, 0),
                                 (-0.0, 7, 0.0, 1), (2.5, 2**31 - 1, np.float32(3.5), np.uint64(5))]:
        portagpu.launch(kernel, (4,), x, out, alpha, n, beta, seed, block=(128,))
        args = cupy.launches[-1]["args"]
        assert [type(a) for a in args[2:]] == [np.float32, np.int32, np.float64, np.uint64]
        assert args[2:] == [alpha, n, beta, seed]
        assert [np.signbit(a) for a in (args[2], args[4])] == [np.signbit(alpha), np.signbit(beta)]
    assert "def fast_launch" in kernel._fast.source
    with pytest.raises(LaunchError, match="cannot hold"):
        portagpu.launch(kernel, (4,), x, out, 0.5, 2**31, 0.5, 1)
    with pytest.raises(LaunchError, match="integer, got float"):
        portagpu.launch(kernel, (4,), x, out, 0.5, 4.0, 0.5, 1)


@ONE_OR_TWO_GPUS
def test_fast_path_keeps_grid_block_and_stream(use_device, fake_cupy, gpu_count):
    use_device("sm_90")
    cupy = fake_cupy(gpus=gpu_count)
    kernel = portagpu.CudaKernel(SOURCE, "fill")
    for grid, block, stream in [(2, 64, None), (2, 64, None), ((3, 2), (32, 2), 77), ((3, 2), (32, 2), None)]:
        portagpu.launch(kernel, grid, cupy.ndarray(), 4, block=block, stream=stream, shared_mem=16)
        launch = cupy.launches[-1]
        assert launch["grid"] == (*((grid,) if isinstance(grid, int) else grid), 1, 1)[:3]
        assert launch["block"] == (*((block,) if isinstance(block, int) else block), 1, 1)[:3]
        assert (launch["stream"] and launch["stream"].ptr) == stream and launch["shared_mem"] == 16
    with pytest.raises(LaunchError, match=r"block \(32, 64, 1\) has 2048 threads"):
        portagpu.launch(kernel, 1, cupy.ndarray(), 4, block=(32, 64))


@pytest.mark.parametrize("block", [(2048,), (32, 32, 2), (1, 1, 65), 0])
def test_block_out_of_range_is_refused(use_device, fake_cupy, block):
    use_device("sm_90")
    cupy = fake_cupy()
    with pytest.raises(LaunchError, match="block"):
        portagpu.launch(portagpu.CudaKernel(SOURCE, "fill"), 1, cupy.ndarray(), 4, block=block)
    assert cupy.launches == []


def test_mixed_devices_are_refused(use_device, fake_cupy):
    use_device("sm_90")
    cupy = fake_cupy()
    kernel = portagpu.CudaKernel(SOURCE, "scale")
    portagpu.launch(kernel, 1, cupy.ndarray(0), cupy.ndarray(0), 1.0, 4, 1.0, 1)  # makes the fast path
    with pytest.raises(LaunchError, match="is on cuda:1, other arguments on cuda:0"):
        portagpu.launch(kernel, 1, cupy.ndarray(0), cupy.ndarray(1), 1.0, 4, 1.0, 1)


def test_unknown_kernel_name_and_options(use_device, fake_cupy):
    use_device("sm_90")
    cupy = fake_cupy()
    with pytest.raises(LaunchError, match="not defined"):
        portagpu.launch(portagpu.CudaKernel(SOURCE, "nope"), 1, cupy.ndarray(), 4)
    with pytest.raises(LaunchError, match="unknown launch options"):
        portagpu.launch(portagpu.CudaKernel(SOURCE, "fill"), 1, cupy.ndarray(), 4, BLOCK=3)
    with pytest.raises(LaunchError, match="num_warps"):
        portagpu.launch(portagpu.CudaKernel(SOURCE, "fill"), 1, cupy.ndarray(), 4, num_warps=4)


@ONE_OR_TWO_GPUS
def test_explicit_stream_is_passed(use_device, fake_cupy, gpu_count):
    use_device("sm_90")
    cupy = fake_cupy(gpus=gpu_count)
    portagpu.launch(portagpu.CudaKernel(SOURCE, "fill"), 1, cupy.ndarray(), 4, stream=1234,
                    shared_mem=256)
    launch = cupy.launches[-1]
    assert launch["stream"].ptr == 1234 and launch["shared_mem"] == 256


@pytest.mark.parametrize("direct", [True, False])
def test_launches_call_the_device_function_directly_or_fall_back(use_device, fake_cupy, direct):
    # RawKernel.kernel (this device's Function, positional options) where CuPy
    # has it; otherwise RawKernel itself with keyword options. Same launch either way.
    use_device("sm_90")
    cupy = fake_cupy()
    cupy.direct = direct
    kernel = portagpu.CudaKernel(SOURCE, "fill")
    for _ in range(3):  # first launch, then the generated fast path
        portagpu.launch(kernel, (2,), cupy.ndarray(), 7, block=(64,), shared_mem=256)
    assert [launch["via"] for launch in cupy.launches] == ["Function" if direct else "RawKernel"] * 3
    for launch in cupy.launches:
        assert (launch["grid"], launch["block"], launch["shared_mem"]) == ((2, 1, 1), (64, 1, 1), 256)
        assert type(launch["args"][1]) is np.int32 and launch["args"][1] == 7


class OnGpu(torch.Tensor):
    """A CPU tensor that says it is on GPU 0, as the launch path sees a CUDA tensor."""

    @property
    def is_cuda(self):
        return True

    def get_device(self):
        return 0


@pytest.fixture
def torch_stream(monkeypatch):
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda index: 4321, raising=False)


@ONE_OR_TWO_GPUS
def test_each_argument_type_pattern_gets_generated_code(use_device, fake_cupy, gpu_count, torch_stream, monkeypatch):
    """Torch tensors and CuPy arrays alternating: after one launch of each, both
    take generated code (the general path is not called again)."""
    use_device("sm_90")
    cupy = fake_cupy(gpus=gpu_count)
    kernel = portagpu.CudaKernel(SOURCE, "fill")
    tensor, array = torch.zeros(8).as_subclass(OnGpu), cupy.ndarray()
    for args in ((array, 4), (tensor, 4), (12345, 4)):  # a raw address is a third pattern
        portagpu.launch(kernel, (1,), *args)
    general = []
    original = type(kernel)._launch
    monkeypatch.setattr(type(kernel), "_launch", lambda self, *a: (general.append(a), original(self, *a)))
    for args in ((tensor, 5), (array, 6), (12345, 7), (tensor, 8)):
        portagpu.launch(kernel, (1,), *args)
    assert general == []
    launched = [launch["args"] for launch in cupy.launches[-4:]]
    assert launched == [[tensor.data_ptr(), 5], [array, 6], [12345, 7], [tensor.data_ptr(), 8]]
    assert cupy.launches[-4]["stream"].ptr == 4321  # torch's current stream for torch tensors


@ONE_OR_TWO_GPUS
def test_addresses_and_scalars_go_in_cupys_holders(use_device, fake_cupy, gpu_count, torch_stream, monkeypatch):
    from portagpu.runtime import cuda_source

    class Address(int):
        pass

    class Scalar:
        def __init__(self, value):
            self.value = value

    monkeypatch.setattr(cuda_source, "cupy_argument_holders", lambda cupy: (Address, Scalar))
    monkeypatch.setattr(cuda_source, "_ADDRESSES", {})
    use_device("sm_90")
    fake_cupy(gpus=gpu_count)
    kernel = portagpu.CudaKernel(SOURCE, "scale")
    x, out = torch.zeros(8).as_subclass(OnGpu), torch.zeros(8).as_subclass(OnGpu)
    for _ in range(3):  # first launch, then generated code
        portagpu.launch(kernel, (1,), x, out, 0.5, 8, 0.25, 3)
    launches = sys.modules["cupy"].launches
    first, second, third = (launch["args"] for launch in launches)
    assert type(first[0]) is int and first[0] == x.data_ptr()  # the general path: plain values
    for args in (second, third):
        assert [type(a) for a in args[:2]] == [Address, Address] and args[:2] == [x.data_ptr(), out.data_ptr()]
        assert all(type(a) is Scalar for a in args[2:])
        assert [type(a.value) for a in args[2:]] == [np.float32, np.int32, np.float64, np.uint64]
    assert second[0] is third[0] and second[3] is third[3]  # reused, not rebuilt per launch


@ONE_OR_TWO_GPUS
def test_a_non_tensor_after_the_first_tensor_leaves_the_torch_pattern(use_device, fake_cupy, gpu_count, torch_stream):
    """The torch pattern's code checks the first tensor's type only; a later
    argument that is no tensor (a CuPy array, a string) gets the general
    path's answer, never an AttributeError."""
    use_device("sm_90")
    cupy = fake_cupy(gpus=gpu_count)
    kernel = portagpu.CudaKernel(SOURCE, "scale")
    x, out = torch.zeros(8).as_subclass(OnGpu), torch.zeros(8).as_subclass(OnGpu)
    for _ in range(2):
        portagpu.launch(kernel, (1,), x, out, 0.5, 8, 0.25, 3)
    assert "def fast_launch" in kernel._fast.source
    array = cupy.ndarray()
    portagpu.launch(kernel, (1,), x, array, 0.5, 8, 0.25, 3)  # both on GPU 0: the general path launches
    assert cupy.launches[-1]["args"][:2] == [x.data_ptr(), array]
    with pytest.raises(LaunchError, match="pointer parameter"):
        portagpu.launch(kernel, (1,), x, "out", 0.5, 8, 0.25, 3)


class CountedOnGpu(OnGpu):
    """OnGpu counting how often the launch code asks for its device."""

    asked = 0

    def get_device(self):
        CountedOnGpu.asked += 1
        return 0


def test_with_one_gpu_the_generated_code_reads_no_device(use_device, fake_cupy, monkeypatch):
    """CuPy sees one GPU: the generated code asks no tensor for its device and
    CuPy for no current device (index 0 is the only one), and launches on
    device 0's current torch stream; what it must refuse it still refuses."""
    use_device("sm_90")
    cupy = fake_cupy(gpus=1)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda index: 1000 + index, raising=False)
    current = []
    monkeypatch.setattr(cupy.cuda.runtime, "getDevice", lambda: current.append(0) or 0)
    kernel = portagpu.CudaKernel(SOURCE, "scale")
    x, out = (torch.zeros(8).as_subclass(CountedOnGpu) for _ in range(2))
    portagpu.launch(kernel, (1,), x, out, 0.5, 8, 0.25, 3)  # the general path makes the code
    CountedOnGpu.asked, current[:] = 0, []
    for _ in range(3):
        portagpu.launch(kernel, (1,), x, out, 0.5, 8, 0.25, 3)
    assert (CountedOnGpu.asked, current) == (0, [])
    assert [launch["stream"].ptr for launch in cupy.launches] == [1000] * 4
    assert all(launch["args"][:2] == [x.data_ptr(), out.data_ptr()] for launch in cupy.launches)
    with pytest.raises(LaunchError, match="torch tensor on cpu"):
        portagpu.launch(kernel, (1,), torch.zeros(8), out, 0.5, 8, 0.25, 3)
    strided = torch.zeros(16).as_subclass(CountedOnGpu)[::2]
    with pytest.raises(LaunchError, match="not contiguous"):
        portagpu.launch(kernel, (1,), strided, out, 0.5, 8, 0.25, 3)
    assert len(cupy.launches) == 4


@pytest.mark.parametrize("linear", [True, False])
def test_one_dimensional_fast_launches_go_through_linear_launch_unchanged(use_device, fake_cupy, linear):
    """Where CuPy's Function has linear_launch, generated code launches a 1-D
    grid through it: CuPy then launches the grid and block asked for. 2-D
    launches, and 1-D ones of more than 2^32 - 1 threads (CuPy on HIP would
    shrink their grid), go through Function.__call__ as before."""
    use_device("sm_90")
    cupy = fake_cupy()
    cupy.linear = linear
    kernel = portagpu.CudaKernel(SOURCE, "fill")
    cases = [((5,), (96,)), (7, 128), ((3, 2), (32, 2)), ((2, 1, 1), (64, 2)), ((2**31 - 1,), (1024,)),
             ((4194303,), (1024,)), ((4194304,), (1024,))]
    for grid, block in cases:
        for _ in range(2):  # the general path, then the generated code
            portagpu.launch(kernel, grid, cupy.ndarray(), 4, block=block, shared_mem=32)
        grid3 = (*((grid,) if isinstance(grid, int) else grid), 1, 1)[:3]
        block3 = (*((block,) if isinstance(block, int) else block), 1, 1)[:3]
        first, second = cupy.launches[-2:]
        assert (first["grid"], first["block"], first["linear"]) == (grid3, block3, False)
        assert (second["grid"], second["block"], second["shared_mem"]) == (grid3, block3, 32)
        one_d = grid3[1:] == block3[1:] == (1, 1) and grid3[0] * block3[0] <= 0xFFFFFFFF
        assert second["linear"] is (linear and one_d), (grid, block)
