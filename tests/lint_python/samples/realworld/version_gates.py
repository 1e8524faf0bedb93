"""Old-torch fallbacks: version-gated code is the old-version path (lint sample)."""

import torch
from packaging.version import Version

if Version(torch.__version__) < Version("2.4.0"):
    amp_fwd = torch.cuda.amp.custom_fwd
    amp_bwd = torch.cuda.amp.custom_bwd
else:
    amp_fwd = torch.amp.custom_fwd(device_type="cuda")
    amp_bwd = torch.amp.custom_bwd(device_type="cuda")

try:
    from torch.amp import GradScaler
except ImportError:
    from torch.cuda.amp import GradScaler


def make_scaler():
    return GradScaler("cuda")


def custom_fwd_for(device_type):
    if hasattr(torch, "amp") and hasattr(torch.amp, "custom_fwd"):
        return torch.amp.custom_fwd(device_type=device_type)
    return torch.cuda.amp.custom_fwd


def autocast_ctx():
    return torch.cuda.amp.autocast()  # expect: PG104
