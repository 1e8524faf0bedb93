"""A CuTe-DSL elementwise kernel and a Triton launch helper (own code)."""

import cutlass  # expect: PG310
import cutlass.cute as cute  # expect: PG310
import triton
from cutlass._mlir.dialects import llvm  # expect: PG310


@cute.kernel
def scale_kernel(src: cute.Tensor, dst: cute.Tensor, factor: cutlass.Float32):
    tid, _, _ = cute.arch.thread_idx()
    dst[tid] = src[tid] * factor


FENCE = "fence.acq_rel.gpu;"


def fence(ptr):
    return llvm.inline_asm(None, [ptr], FENCE, "l", has_side_effects=True)  # expect: PG403


def launch_arg(block_n: int, n: int, num_warps: int) -> tuple[int, int]:
    return min(block_n, triton.next_power_of_2(n)), num_warps


def plan(n: int) -> tuple[int, int]:
    if n <= 1 << 20:
        block, num_warps = launch_arg(1024, n, 8)
    else:
        block, num_warps = launch_arg(4096, n, 32)  # expect: PG401
    return block, num_warps
