"""Inference script shapes (own code): autocast with a literal device type,
a project weight loader given `location=`."""

from contextlib import nullcontext

import torch
from torch import autocast


def load_weights(path: str, location: str = "cpu") -> dict:
    return torch.load(path, map_location=location)


def restore(model, path: str):
    model.load_state_dict(load_weights(path, location="cuda"))  # expect: PG103
    return model


def sample(model, x, use_amp: bool):
    scope = autocast if use_amp else nullcontext
    with scope("cuda"):  # expect: PG103
        return model(x)


def sample_on(model, x, device: torch.device):
    with torch.autocast(device.type, dtype=torch.float16):
        return model(x)
