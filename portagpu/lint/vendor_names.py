"""What a name says about vendors: the words of an identifier or file name
(`onlyCUDA` -> only, cuda) and the targets such a name covers. Shared by the
Python guards and by the path facts the CUDA side asks too (vendor_paths)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from portagpu.lint.model import ALL_TARGETS

EVERY = frozenset(ALL_TARGETS)
NON_CUDA = frozenset(("mps", "cpu"))
MPS = frozenset(("mps",))
NONE: frozenset[str] = frozenset()

AMD_PREFIXES = ("hip", "rocm", "amdsmi", "amdgpu")
# NVIDIA hardware/toolchain words: such code never runs on another vendor
NVIDIA_PREFIXES = (
    "nvidia",
    "nvml",
    "nvsmi",
    "nvtx",
    "cupti",
    "ptx",
    "cutlass",
    "cutedsl",
    "nvmath",
    "jetson",
)
# CUDA API words: PyTorch/CuPy map these to HIP on ROCm (torch.cuda, cudnn->MIOpen,
# nccl->RCCL), so such code still runs on AMD and only MPS/CPU are covered
CUDA_PREFIXES = ("cuda", "cudnn", "nccl", "cublas")
NVIDIA_ARCH = re.compile(r"(?:^|_)sm_?\d{2,3}a?(?:$|_)")


@lru_cache(maxsize=4096)
def name_words(name: str) -> tuple[str, ...]:
    """`onlyCUDA` -> (only, cuda); `TEST_WITH_ROCM` -> (test, with, rocm)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", spaced)
    return tuple(w for w in re.split(r"[^a-z]+", spaced.lower()) if w)


@lru_cache(maxsize=4096)
def word_cover(name: str) -> frozenset[str]:
    if NVIDIA_ARCH.search(name.lower()):
        return EVERY  # gemm_sm90.py, _sm100_kernel: one NVIDIA architecture
    words = name_words(name)
    if amd_words(words):
        return EVERY
    if any(w.startswith(NVIDIA_PREFIXES) for w in words):
        return EVERY
    if any(w.startswith(CUDA_PREFIXES) for w in words):
        return NON_CUDA
    if "mps" in words:
        return MPS
    return NONE


# names of a dispatch's other sides: devices, vendors, and the portable paths
# a CUDA file is paired with (ops/cuda.py beside ops/torch.py or ops/reference.py)
OTHER_SIDES = frozenset(
    "cpu mps xpu npu tpu hpu rocm hip amd metal xla mlu musa intel ascend habana vulkan opencl sycl "
    "torch triton reference fallback generic default naive native python numpy".split()
)


def amd_words(words: Iterable[str]) -> bool:
    return any(w.startswith(AMD_PREFIXES) or w == "amd" for w in words)


def names_nvidia(name: str) -> bool:
    """A one-word name of NVIDIA's side: cuda, nvidia, cudnn, sm90."""
    return bool(NVIDIA_ARCH.search(name.lower())) or any(
        w.startswith(NVIDIA_PREFIXES + CUDA_PREFIXES) for w in name_words(name)
    )


def other_side_words(words: Iterable[str]) -> bool:
    return any(w in OTHER_SIDES or w.startswith(AMD_PREFIXES) for w in words)


def names_other_side(name: str) -> bool:
    """`CpuTracker`, `forward_rocm`, `mps_impl`: named for a dispatch's other side."""
    return other_side_words(name_words(name))
