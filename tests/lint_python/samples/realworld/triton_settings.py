"""Launch settings of fused Triton kernels (lint sample)."""

import torch
import triton

MAX_FUSED = 65536


def is_hip():
    return torch.version.hip is not None


def calculate_settings(n):
    block = triton.next_power_of_2(n)
    num_warps = 4
    if block >= 32768:
        num_warps = 32  # expect: PG401
    elif block >= 8192:
        num_warps = 16
    return block, num_warps


def calculate_settings_portable(n):
    block = triton.next_power_of_2(n)
    num_warps = 32 if not is_hip() else 16 if block >= 32768 else 8
    return block, num_warps


def row_warps(block):
    return 4 if block < 2048 else (8 if block < 8192 else 16)


def autotune_space():
    return [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128) for w in (2, 4, 8)]


def pruned_space(block_m, block_n):
    configs = []
    for num_warps in (1, 2, 4, 8):
        if 32 * num_warps > block_m * block_n:  # expect: PG402
            continue
        configs.append(triton.Config({"BM": block_m, "BN": block_n}, num_warps=num_warps))
    return configs


def tile_threads(num_warps=4):
    return num_warps * 32  # expect: PG402


def warp_size_aware(num_warps, warp_size):
    return num_warps * warp_size
