"""GPU-only runtime tests (NVIDIA through CuPy/NVRTC and Triton; skipped
without a CUDA GPU). Run on the GPU machine with the command in docs/runtime.md."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA/ROCm GPU", allow_module_level=True)

# ruff: noqa: E402
import triton
import triton.language as tl

import portagpu
from portagpu.errors import LaunchError
from portagpu.runtime import dispatch

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")

SOURCE = r"""
extern "C" __global__ void axpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void warp_size(int* out) { out[0] = PORTAGPU_WARP_SIZE; }
"""


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


def test_triton_fast_path_is_used_and_correct():
    launcher_before = dispatch.triton_launcher(add_kernel)
    assert launcher_before is None or launcher_before.fast
    for n in (1024, 1024, 1000, 77777, 1024):
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        out = torch.full_like(x, float("nan"))
        portagpu.launch(add_kernel, (triton.cdiv(n, 256),), x, y, out, n, BLOCK=256, num_warps=4)
        torch.testing.assert_close(out, x + y)
    launcher = dispatch.triton_launcher(add_kernel)
    if portagpu.backends.backend_for(portagpu.detect()).triton_fast_path:
        assert launcher.fast and launcher.cache  # later launches were served from the cache
        assert "def fast_launch" in launcher.shapes[4].source  # by the generated code


def test_triton_c_launcher_is_called_directly_where_the_wrapper_is_known():
    """On a Triton whose launcher wrapper triton_direct knows (3.6 on the GPU
    machine), launches skip it; any other Triton keeps calling it. Either way
    the results are right, also for a tensor view at an offset."""
    from portagpu.runtime import triton_direct

    n = 5000
    x, y = torch.randn(n + 4, device="cuda"), torch.randn(n, device="cuda")
    for source in (x[:n], x[4:], x[:n]):  # x[4:] is 16-byte aligned too: same specialisation
        out = torch.full_like(y, float("nan"))
        portagpu.launch(add_kernel, (triton.cdiv(n, 1024),), source, y, out, n, BLOCK=1024)
        torch.testing.assert_close(out, source + y)
    launcher = dispatch.triton_launcher(add_kernel)
    if not launcher.fast:
        pytest.skip("no Triton fast path on this backend")
    entries = list(launcher.cache.values())
    run = entries[0][0]
    known = triton_direct.wrapper_digest(type(run)) in triton_direct.KNOWN_WRAPPERS
    assert all((entry[5] is not None) == known for entry in entries)
    if triton.__version__.startswith("3.6"):
        assert known, f"Triton {triton.__version__}'s launcher wrapper changed: {triton_direct.wrapper_digest(type(run))}"


def test_a_prepared_launch_is_correct_for_new_tensors_each_call():
    from portagpu.runtime.dispatch import prepare_launch

    n = 3000
    go = prepare_launch(add_kernel, (triton.cdiv(n, 512),), (None, None, None, n), (0, 1, 2), 4, {"BLOCK": 512})
    for dtype in (torch.float32, torch.float32, torch.float16, torch.float32):
        x, y = torch.randn(n + 1, device="cuda", dtype=dtype), torch.randn(n, device="cuda", dtype=dtype)
        for source in (x[:n], x[1:]):  # x[1:] is not 16-byte aligned: its own compiled kernel
            out = torch.full_like(y, float("nan"))
            go(source, y, out)
            torch.testing.assert_close(out, source + y)
    if dispatch.triton_launcher(add_kernel).fast:
        assert "bound_launch(p0, p1, p2)" in go.source


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, a, n, shift, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x, y = tl.load(x_ptr + offsets, mask=mask), tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a * x + y + (shift % 7).to(tl.float32), mask=mask)


def test_a_prepared_launch_goes_to_the_driver_with_every_parameter_packed():
    """Prepared launches (portagpu.kernels' plans) call the driver directly
    where Triton's launcher wrapper is known (3.6 on the GPU machine): a fixed
    tensor, an fp32, an i32 and an i64 parameter packed once, the varying
    tensors' addresses per call; results as Triton's own launcher gives."""
    from portagpu.runtime import driver_launch
    from portagpu.runtime.dispatch import prepare_launch

    n, a, shift = 5000, 0.5, 2**40 + 3  # shift % 7 == 5, and only as an i64
    y = torch.randn(n, device="cuda")
    go = prepare_launch(scaled_add_kernel, (triton.cdiv(n, 1024),), (None, y, None, a, n, shift), (0, 2), 4,
                        {"BLOCK": 1024}, trusted=True)
    calls = []
    scope = go.__globals__
    if "drive" in scope:
        drive = scope["drive"]
        scope["drive"] = lambda *args: calls.append(args[2:]) or drive(*args)
    for _ in range(3):
        x, out = torch.randn(n, device="cuda"), torch.full_like(y, float("nan"))
        go(x, out)
        torch.testing.assert_close(out, a * x + y + 5)
    if triton.__version__.startswith("3.6") and portagpu.detect().vendor == "nvidia":
        names = portagpu.backends.backend_for(portagpu.detect()).driver_launch_names
        assert driver_launch.driver(names) is not None, driver_launch.why_not(names)
        assert len(calls) == 2  # the first call compiled through Triton
        assert calls[-1] == (x.data_ptr(), out.data_ptr())


def test_portagpu_launch_goes_to_the_driver_with_every_argument_per_call():
    """portagpu.launch's generated fast path calls the driver with the grid and
    every argument (where Triton's launcher wrapper is known): floats, i32,
    i64, n == 1 compiled in, a new grid per call; results as Triton's."""
    from portagpu.runtime import driver_launch

    y = torch.randn(5000, device="cuda")
    calls = []
    for n, a, shift in ((5000, 0.5, 12), (5000, -2.0, 2**40 + 3), (4008, 0.25, 12), (1, 3.0, 12), (1, 1.0, 12)):
        x, out = torch.randn(n, device="cuda"), torch.full((n,), float("nan"), device="cuda")
        portagpu.launch(scaled_add_kernel, (triton.cdiv(n, 512),), x, y, out, a, n, shift, BLOCK=512)
        torch.testing.assert_close(out, a * x + y[:n] + shift % 7)
        launcher = dispatch.triton_launcher(scaled_add_kernel)
        scope = launcher.shapes[6].__globals__ if 6 in launcher.shapes else {}
        if "drive_grid" in scope and not hasattr(scope["drive_grid"], "counted"):
            drive_grid = scope["drive_grid"]

            def counted(*args, drive_grid=drive_grid):
                calls.append(args[1:4])
                return drive_grid(*args)

            counted.counted = True
            scope["drive_grid"] = counted
    if triton.__version__.startswith("3.6") and portagpu.detect().vendor == "nvidia":
        names = portagpu.backends.backend_for(portagpu.detect()).driver_launch_names
        assert driver_launch.driver(names) is not None, driver_launch.why_not(names)
        # compiled: n = 5000, shift an i64, n == 1; the other two launches went to the driver
        assert calls == [(8, 1, 1), (1, 1, 1)]


def test_cuda_kernel_alternating_torch_and_cupy_arguments():
    """Each argument-type pattern gets its generated code; both stay correct."""
    kernel = portagpu.CudaKernel(SOURCE, "axpy")
    n = 3000
    for _ in range(3):
        for framework in ("cupy", "torch"):
            check_axpy(kernel, framework, n, 0.25)
    assert len(kernel._patterns) == 2
    assert kernel._fast.source.count("def fast_launch") == 1


def check_axpy(kernel, framework: str, n: int, a: float) -> None:
    """y = a * x + y through portagpu.launch on fresh inputs of `framework`."""
    if framework == "torch":
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    else:
        x, y = cupy.random.randn(n, dtype=cupy.float32), cupy.random.randn(n, dtype=cupy.float32)
    expected = a * x + y
    portagpu.launch(kernel, (triton.cdiv(n, 256),), x, y, a, n, block=256)
    if framework == "torch":
        torch.testing.assert_close(y, expected)
    else:
        cupy.testing.assert_allclose(y, expected, rtol=1e-6)


@pytest.mark.parametrize("framework", ["torch", "cupy"])
def test_cuda_kernel_fast_path_is_used_and_correct(framework):
    kernel = portagpu.CudaKernel(SOURCE, "axpy")
    for n in (1000, 4096, 4096, 77777, 4096):
        check_axpy(kernel, framework, n, 0.5)
    assert "def fast_launch" in kernel._fast.source
    with pytest.raises(LaunchError, match="not contiguous"):
        gpu = torch.zeros(8, device="cuda")
        portagpu.launch(kernel, 1, torch.zeros(16, device="cuda")[::2], gpu, 1.0, 8)


def test_triton_fast_path_uses_the_current_stream():
    stream = torch.cuda.Stream()
    n = 1 << 20
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        for _ in range(3):
            out = torch.full_like(x, float("nan"))
            portagpu.launch(add_kernel, (triton.cdiv(n, 1024),), x, y, out, n, BLOCK=1024)
    stream.synchronize()
    torch.testing.assert_close(out, x + y)


def test_cuda_kernel_with_torch_tensors_and_float_scalar():
    n = 100_003
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    expected = 0.3 * x + y
    kernel = portagpu.CudaKernel(SOURCE, "axpy")
    portagpu.launch(kernel, (triton.cdiv(n, 256),), x, y, 0.3, n, block=256)
    torch.testing.assert_close(y, expected)  # a float64 0.3 would give garbage here


def test_cuda_kernel_with_cupy_arrays_on_a_cupy_stream():
    n = 4097
    x = cupy.random.rand(n, dtype=cupy.float32)
    y = cupy.random.rand(n, dtype=cupy.float32)
    expected = 2.0 * x + y
    with cupy.cuda.Stream() as stream:
        portagpu.launch(portagpu.CudaKernel(SOURCE, "axpy"), (triton.cdiv(n, 128),), x, y, 2.0, n,
                        block=(128,))
    stream.synchronize()
    cupy.testing.assert_allclose(y, expected, rtol=1e-6)


def test_cuda_kernel_on_a_torch_stream():
    n = 1 << 22
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    expected = 1.5 * x + y
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        portagpu.launch(portagpu.CudaKernel(SOURCE, "axpy"), (n // 256,), x, y, 1.5, n)
    stream.synchronize()
    torch.testing.assert_close(y, expected)


def test_warp_size_is_defined_from_the_device():
    out = torch.full((1,), -1, dtype=torch.int32, device="cuda")
    portagpu.launch(portagpu.CudaKernel(SOURCE, "warp_size"), 1, out, block=1)
    assert out.item() == portagpu.detect().warp_size


def test_cuda_kernel_refuses_host_and_strided_tensors():
    kernel = portagpu.CudaKernel(SOURCE, "axpy")
    gpu = torch.zeros(8, device="cuda")
    with pytest.raises(LaunchError, match="on cpu"):
        portagpu.launch(kernel, 1, torch.zeros(8), gpu, 1.0, 8)
    with pytest.raises(LaunchError, match="not contiguous"):
        portagpu.launch(kernel, 1, torch.zeros(16, device="cuda")[::2], gpu, 1.0, 8)


def test_matmul_bf16_matches_torch_and_names_cublas():
    a = torch.randn(1024, 512, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    torch.testing.assert_close(portagpu.matmul(a, b), torch.matmul(a, b))
    call = portagpu.last_backend()
    assert call.framework == "torch" and call.device.startswith("cuda")
    assert call.library in ("cuBLAS", "cuBLASLt", "rocBLAS", "hipBLASLt")


def test_matmul_cupy():
    a = cupy.random.rand(128, 64, dtype=cupy.float32)
    b = cupy.random.rand(64, 32, dtype=cupy.float32)
    cupy.testing.assert_allclose(portagpu.matmul(a, b), a @ b, rtol=1e-5)
    assert portagpu.last_backend().framework == "cupy"
