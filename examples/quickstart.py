"""portagpu's main job on whatever device is here (the CPU when there is no GPU):

1. detect the device and its warp size;
2. launch a Triton kernel and a CUDA C kernel, and call matmul, through one API;
3. run portable kernels from portagpu.kernels;
4. lint an NVIDIA-only script and translate its embedded CUDA to HIP.

Every numeric result is checked against torch; the script exits 1 on a wrong one.
"""

from pathlib import Path

import torch
import triton
import triton.language as tl

import portagpu  # in any order: with no GPU, portagpu.launch runs Triton's interpreter per kernel

HERE = Path(__file__).resolve().parent

AXPY = r"""
extern "C" __global__ void axpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(
        out_ptr + offsets,
        tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
        mask=mask,
    )


def axpy_reference(x, y, a, n):
    """What axpy computes, for devices that cannot compile CUDA C (MPS, CPU)."""
    y[:n] += a * x[:n]


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float((out.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-30))


def check(name: str, out: torch.Tensor, ref: torch.Tensor, tol: float = 1e-5) -> bool:
    err = relative_error(out, ref)
    ok = err < tol and not torch.isnan(out).any()
    print(f"  {name:<34} rel. error {err:.1e}  {'ok' if ok else 'WRONG'}")
    return ok


def run_kernels(device: portagpu.Device) -> bool:
    where = device.torch_device
    n = 5000
    x, y = torch.randn(n, device=where), torch.randn(n, device=where)
    ok = True

    out = torch.full_like(x, float("nan"))  # poisoned: an unwritten element fails
    block = 1024 if device.is_gpu else 8192  # the interpreter likes few, large blocks
    portagpu.launch(add_kernel, (triton.cdiv(n, block),), x, y, out, n, BLOCK=block, num_warps=4)
    ok &= check("Triton add via portagpu.launch", out, x + y)

    axpy = portagpu.CudaKernel(AXPY, "axpy", reference=axpy_reference)
    expected = 0.5 * x + y
    portagpu.launch(axpy, (triton.cdiv(n, 256),), x, y, 0.5, n, block=(256,))
    how = "compiled" if device.is_gpu else "reference"
    ok &= check(f"CUDA C axpy ({how})", y, expected)

    a, b = torch.randn(256, 128, device=where), torch.randn(128, 64, device=where)
    c = portagpu.matmul(a, b)
    ok &= check(f"matmul ({portagpu.last_backend().library})", c, a.double() @ b.double(), 1e-4)

    import portagpu.kernels as K

    rows = torch.randn(64, 1000, device=where)
    ok &= check("kernels.softmax", K.softmax(rows), torch.softmax(rows.double(), -1))
    print(f"    (implementation: {K.last_impl()})")
    ok &= check("kernels.cumsum", K.cumsum(x), torch.cumsum(x.double(), 0), 1e-4)
    return bool(ok)


def lint_and_translate() -> None:
    from portagpu.cli import main as portagpu_cli  # in-process: the installed portagpu

    legacy = HERE / "legacy_app"
    shown = legacy.relative_to(HERE.parent)
    print(f"\n$ portagpu lint {shown}")
    portagpu_cli(["lint", "--no-cache", str(legacy)])
    print(f"\n$ portagpu hipify --dry-run {shown}/train.py")
    portagpu_cli(["hipify", "--dry-run", str(legacy / "train.py")])


def main() -> int:
    device = portagpu.detect()
    print(
        f"device: {device.backend}:{device.index} {device.name} (arch {device.arch}, "
        f"warp size {device.warp_size}, BLAS {device.blas})"
    )
    ok = run_kernels(device)
    lint_and_translate()
    print("\nall results correct" if ok else "\nSOME RESULTS WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
