"""CPU tensors that say they are on a GPU, as the Triton fast path sees CUDA
tensors (the runtime tests' fakes are in conftest.py; this module imports torch,
which conftest.py does not)."""

from __future__ import annotations

import torch


class OnGpu(torch.Tensor):
    """A CPU tensor that says it is on a GPU (index `gpu`, default 0), as the
    fast path sees a CUDA tensor."""

    @property
    def is_cuda(self):
        return True

    def get_device(self):
        return getattr(self, "gpu", 0)


def on_gpu(tensor: torch.Tensor, index: int = 0) -> OnGpu:
    """`tensor` as an OnGpu on simulated GPU `index`."""
    moved = tensor.as_subclass(OnGpu)
    moved.gpu = index
    return moved
