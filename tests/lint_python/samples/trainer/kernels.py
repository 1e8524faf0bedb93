"""Triton and CuPy kernels tuned on an H100 (lint sample)."""

import cupy as cp
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice  # expect: PG404

CONFIGS = [  # expect: PG405
    triton.Config({"BLOCK": 4096}, num_warps=32),
    triton.Config({"BLOCK": 8192}, num_warps=32),
]

MIXED = [
    triton.Config({"BLOCK": 1024}, num_warps=8),
    triton.Config({"BLOCK": 4096}, num_warps=32),
]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.inline_asm_elementwise(  # expect: PG403
        "mul.f32 $0, $1, 0f40000000;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1
    )
    tl.store(x_ptr + offs, libdevice.exp(y), mask=offs < n)


def launch(x: torch.Tensor, num_warps: int = 8) -> None:
    threads = num_warps * 32  # expect: PG402
    grid = (triton.cdiv(x.numel(), threads),)
    scale[grid](x, x.numel(), BLOCK=1024, num_warps=32)  # expect: PG401


def launch_portable(x: torch.Tensor, num_warps: int = 8) -> None:
    warp = 64 if torch.version.hip else 32
    scale[(1,)](x, x.numel(), BLOCK=1024, num_warps=num_warps * warp // 32)


def grid_sync_kernel(src: str):
    if cp.cuda.runtime.is_hip:
        return cp.RawKernel(src, "k")
    return cp.RawKernel(src, "k", enable_cooperative_groups=True)


def relocatable(src: str):
    return cp.RawModule(code=src, options=("-rdc=true",))  # expect: PG302


def conv_workspace():
    from cupy.cuda import cudnn  # expect: PG301

    return cudnn.getVersion()
