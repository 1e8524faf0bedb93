"""A small training script written for one NVIDIA box (lint sample)."""

import os

import torch
import torch.nn as nn
from torch.cuda import amp

os.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"  # expect: PG106

torch.backends.cudnn.deterministic = True  # expect: PG105

DEVICE = "cuda:0"  # expect: PG103


def build(num_classes: int, device="cuda") -> nn.Module:  # expect: PG103
    model = nn.Linear(128, num_classes)
    return model.cuda()  # expect: PG102


def train(model, loader, epochs: int) -> None:
    scaler = amp.GradScaler()  # expect: PG104
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to("cuda"), y.to("cuda")  # expect: PG102
            with torch.cuda.amp.autocast():  # expect: PG104
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        torch.cuda.synchronize()  # expect: PG101
    print(torch.cuda.max_memory_allocated() / 2**20, "MiB")  # expect: PG108


def evaluate(model, loader, device: torch.device) -> float:
    correct = 0
    for x, y in loader:
        x = x.cuda(non_blocking=True)  # expect: PG102
        correct += (model(x).argmax(1) == y.to(device)).sum().item()
    if device.type == "cuda":
        torch.cuda.empty_cache()  # guarded by the device check
    return correct


def pick_device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
