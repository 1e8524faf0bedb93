"""One multi-GPU script for every machine (docs/distributed.md):

    python examples/multi_gpu.py                                    # one process, one device
    torchrun --nproc-per-node 2 examples/multi_gpu.py               # one process per GPU
    PORTAGPU_DEVICE=cpu torchrun --nproc-per-node 2 examples/multi_gpu.py   # CPU ranks, gloo

Each rank starts torch.distributed through portagpu.distributed.init() (NCCL on
NVIDIA, RCCL on AMD, gloo on the CPU), runs a Triton kernel through
portagpu.launch on its own device (x times rank+1), and all-reduces the
result; every rank checks the sum and rank 0 prints OK. Exits 1 on a wrong
result on any rank.
"""

# ruff: noqa: E402, I001  (portagpu must be imported before triton defines kernels)
import portagpu  # first: switches Triton's interpreter on when there is no GPU

import sys

import torch
import torch.distributed as dist
import triton
import triton.language as tl

import portagpu.distributed as pgd


@triton.jit
def scale_kernel(x_ptr, out_ptr, factor, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


def say(line: str) -> None:
    """One write per line: the ranks share the terminal and must not interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> int:
    info = pgd.init()
    device = info.device
    # the CPU runs Triton in its interpreter, which likes few, large blocks
    n, block = (1 << 22, 1024) if device.is_gpu else (1 << 14, 1 << 14)
    x = torch.arange(n, dtype=torch.float32, device=info.torch_device)
    out = torch.full_like(x, float("nan"))  # poisoned: an element the kernel misses fails
    factor = float(info.rank + 1)
    portagpu.launch(scale_kernel, (triton.cdiv(n, block),), x, out, factor, n, BLOCK=block,
                    num_warps=4)  # fmt: skip
    kernel_ok = bool(torch.equal(out, x * factor))
    dist.all_reduce(out)  # sum over ranks: x * (1 + 2 + ... + world)
    world = info.world_size
    reduce_ok = bool(torch.equal(out, x * (world * (world + 1) / 2)))  # exact below 2**24
    flag = torch.tensor([int(kernel_ok and reduce_ok)], device=info.torch_device)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)  # every rank must be right
    reading = portagpu.telemetry()  # this rank's device
    used = f"{reading.memory_used / 2**20:.0f} MiB used" if reading.memory_used else reading.source
    say(
        f"rank {info.rank}/{world} (local {info.local_rank}) on {info.torch_device} "
        f"'{device.name}' via {info.backend} ({info.collective_library}): "
        f"kernel {'ok' if kernel_ok else 'WRONG'}, all-reduce {'ok' if reduce_ok else 'WRONG'}; "
        f"{used}"
    )
    all_ok = bool(flag.item())
    pgd.shutdown()
    if info.is_main:
        say("OK" if all_ok else "FAILED: a rank computed a wrong result")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
