"""One user script, unchanged on the CPU default and on a GPU: a Triton kernel,
a CUDA C kernel and a matmul through portagpu. Prints one line per check and
exits non-zero on a wrong result. (Run by tests/runtime/test_portable_script.py.)"""

# ruff: noqa: I001  (portagpu must be imported before triton)
import portagpu  # first: switches Triton's interpreter on when there is no GPU

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

ADD_SOURCE = r"""
extern "C" __global__ void axpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def axpy_reference(x, y, a, n):
    y[:n] += a * x[:n]


def main() -> int:
    device = portagpu.detect()
    where = device.torch_device
    n = 5000
    x = torch.randn(n, device=where)
    y = torch.randn(n, device=where)

    out = torch.full_like(x, float("nan"))
    block = 4096 if not device.is_gpu else 1024  # few large blocks on the interpreter
    portagpu.launch(add_kernel, (triton.cdiv(n, block),), x, y, out, n, BLOCK=block, num_warps=4)
    ok_triton = torch.allclose(out, x + y)

    axpy = portagpu.CudaKernel(ADD_SOURCE, "axpy", reference=axpy_reference)
    expected = 0.5 * x + y
    portagpu.launch(axpy, ((n + 255) // 256,), x, y, 0.5, n, block=(256,))
    ok_cuda = torch.allclose(y, expected, rtol=1e-5, atol=1e-5)

    a = torch.randn(256, 128, device=where)
    b = torch.randn(128, 64, device=where)
    c = portagpu.matmul(a, b)
    ok_matmul = torch.allclose(c, a @ b, rtol=1e-4, atol=1e-4)

    print(f"device: {device.backend} {device.name}")
    print(f"triton add: {'ok' if ok_triton else 'WRONG'}")
    print(f"cuda axpy ({'compiled' if device.is_gpu else 'reference'}): {'ok' if ok_cuda else 'WRONG'}")
    print(f"matmul ({portagpu.last_backend()}): {'ok' if ok_matmul else 'WRONG'}")
    return 0 if ok_triton and ok_cuda and ok_matmul else 1


if __name__ == "__main__":
    raise SystemExit(main())
