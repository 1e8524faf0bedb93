"""Small Triton kernels for the compile-check tests (written for them; each compiles
in well under a second for a target, except the tl.dot ones on gfx1100). Also used
on a real GPU by test_gpu.py."""

import triton
import triton.language as tl

import portagpu.kernelcheck as kc


# 32 warps: 1,024 threads on a 32-lane GPU, 2,048 on a 64-lane CDNA GPU
@kc.signature(x="*fp32", y="*fp32", out="*fp32", n="i32", BLOCK=1024, num_warps=32)
@kc.signature(x="*fp32", y="*fp32", out="*fp32", n="i32", BLOCK=1024, num_warps=4)
@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(
        out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask
    )


@kc.signature(out="*i32")
@triton.jit
def sm_id_kernel(out):
    # NVIDIA-only: reads the %smid special register through inline PTX
    tl.store(out + tl.program_id(0), tl.extra.cuda.smid())


@triton.jit
def no_declaration_kernel(x, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x + offsets, tl.load(x + offsets, mask=offsets < n), mask=offsets < n)


@triton.autotune(
    configs=[
        triton.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=2, num_stages=2),
        # four stages of 64x128 + 128x64 fp16 tiles: 96 KiB of LDS on RDNA3 (64 KiB there)
        triton.Config({"BM": 64, "BN": 64, "BK": 128}, num_warps=4, num_stages=4),
    ],
    key=["K"],
)
@triton.jit
def tiled_dot_kernel(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)
