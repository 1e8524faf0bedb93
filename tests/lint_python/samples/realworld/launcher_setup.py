"""Launcher helpers in the style of multi-node inference scripts (own code)."""

import torch


def bind(device: str) -> None:
    # a prefix test on the device name is a device check: no finding inside
    if device.startswith("cuda:"):
        torch.cuda.set_device(device)


def make_default_tensors_gpu() -> None:
    torch.set_default_device("cuda")  # expect: PG103


def make_default_tensors_checked() -> None:
    if torch.cuda.is_available():
        torch.set_default_device("cuda")


def link_kind() -> str:
    # the test itself raises off CUDA: a device query is not a device check
    if "PCIe" in torch.cuda.get_device_name():  # expect: PG101
        return "pcie"
    return "nvlink"


def tensor_cores() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 7
