"""A device abstraction: vendor code here is deliberate (lint sample, no findings)."""

import torch


class Accelerator:
    def synchronize(self) -> None:
        raise NotImplementedError


class CudaAccelerator(Accelerator):
    def synchronize(self) -> None:
        torch.cuda.synchronize()

    def to_device(self, t: torch.Tensor) -> torch.Tensor:
        return t.cuda()


class MpsAccelerator(Accelerator):
    def synchronize(self) -> None:
        torch.mps.synchronize()


def get_accelerator() -> Accelerator:
    if torch.version.hip or torch.cuda.is_available():
        return CudaAccelerator()
    return MpsAccelerator()


HAS_CUDA = torch.cuda.is_available()


def maybe_sync() -> None:
    if HAS_CUDA:
        torch.cuda.synchronize()
