"""Sampling helpers (own code): autocast bound to a plain local name before
use, and a device literal written on its own line inside `.to(...)`."""

import torch
from torch import autocast


def denoise(model, latents, steps: int):
    scope = autocast
    with torch.no_grad():
        with scope("cuda"):  # expect: PG103
            for _ in range(steps):
                latents = model(latents)
    return latents


def extra_inputs(count: int):
    return torch.zeros(count).to(
        "cuda"  # expect: PG102
    )


def keep_dtype(x):
    cast = torch.float16
    return x.to(cast)
