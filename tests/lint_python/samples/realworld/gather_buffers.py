"""Own code in the style of training utilities: a lazily built CUDA staging
buffer cached on the function (`hasattr(f, "_buffer")` is the program's own
cache, not a probe of an API), a wheel tag built from the CUDA version, a
device choice that only warns before falling back to the CPU, and a Hopper
TMA descriptor filled through Triton's CUDA driver."""

import warnings

import numpy as np
import torch
import triton
from packaging.version import parse


def gather(size):
    if not hasattr(gather, "_buffer") or gather._buffer.numel() < size:
        gather._buffer = torch.cuda.ByteTensor(size)  # expect: PG109
    return gather._buffer


def probe_compile():
    if hasattr(torch, "compile"):
        return torch.cuda.FloatTensor(1)
    return None


def interop_stream(x):
    if hasattr(x, "__cuda_array_interface__"):  # a protocol probe: only CUDA arrays have it
        return torch.cuda.current_stream()
    return None


def wheel_tag():
    cuda = parse(torch.version.cuda)  # expect: PG112
    return f"cu{cuda.major}{cuda.minor}"


def pick_device():
    if torch.cuda.is_available():  # expect: PG107
        device = "cuda"
    else:
        warnings.warn("no GPU found: training on the CPU will be slow", stacklevel=2)
        device = "cpu"
    return device


def describe(a, m, k):
    desc = np.empty(128, dtype=np.int8)
    triton.runtime.driver.active.utils.fill_2d_tma_descriptor(  # expect: PG406
        a.data_ptr(), m, k, 64, 64, 1, desc
    )
    return desc
