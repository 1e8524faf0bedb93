"""Device selection helpers of the kind detection/training repos carry (lint sample)."""

import argparse
import os

import torch


def select_device(device="", batch_size=None):
    cpu = device.lower() == "cpu"
    if cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"  # expect: PG803
    elif device:
        os.environ["CUDA_VISIBLE_DEVICES"] = device  # expect: PG803
        assert torch.cuda.is_available(), f"CUDA unavailable, invalid device {device} requested"
    cuda = not cpu and torch.cuda.is_available()
    if cuda:
        n = torch.cuda.device_count()
        for i in range(n):
            print(torch.cuda.get_device_properties(i).name)
    return torch.device("cuda:0" if cuda else "cpu")  # expect: PG107


def init_distributed(local_rank):
    n = torch.cuda.device_count()
    if n > 0:
        torch.cuda.set_device(local_rank % n)  # guarded by the device count


def legacy_buffers(n):
    return torch.cuda.FloatTensor(n).zero_()  # expect: PG109


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--device", type=str, default="cuda", help="device to run on")  # expect: PG103
    p.add_argument("--batch", type=int, default=32)
    p.add_argument(
        "--fallback",
        default="cuda" if torch.cuda.is_available() else "cpu",  # expect: PG107
    )
    return p.parse_args()


model = (
    torch.nn.Linear(4, 4).half().cuda()  # expect: PG102
)
