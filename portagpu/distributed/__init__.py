"""Multi-GPU through torch.distributed, with the vendor part in one call.

    import portagpu.distributed as pgd

    info = pgd.init()                       # under torchrun, or plain python
    x = torch.ones(4, device=info.torch_device)
    torch.distributed.all_reduce(x)         # NCCL, RCCL or gloo: torch's own call
    pgd.shutdown()

`init()` picks this rank's device and the backend for its vendor (NCCL on
NVIDIA, RCCL through "nccl" on ROCm, gloo on CPU; MPS has no collective
library). `restrict_visible_devices()` sets the vendor's visible-device
variable. `portagpu.distributed.testing.spawn()` runs a function under N
processes on the CPU with gloo, for tests. Importing this package imports
no torch. See docs/distributed.md.
"""

from __future__ import annotations

from portagpu.distributed.process_group import RankInfo, current, init, shutdown
from portagpu.visibility import restrict_visible_devices

__all__ = ["RankInfo", "current", "init", "restrict_visible_devices", "shutdown"]
