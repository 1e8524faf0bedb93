"""Switch Triton's CPU interpreter on at `import portagpu` when no GPU is here.

Triton reads TRITON_INTERPRET when `@triton.jit` runs (not at launch), so this
must happen before any kernel module is imported. The check is deliberately
cheap and imports nothing: it looks for the device nodes a Triton GPU backend
needs. Order of precedence (first match wins):

1. TRITON_INTERPRET already set (to anything)  -> left alone: the user decided.
2. PORTAGPU_DEVICE=cpu or mps                  -> interpreter on (Triton has no
   CPU or Metal backend).
3. PORTAGPU_DEVICE=cuda or rocm                -> left off.
4. /dev/nvidiactl, /dev/kfd or /dev/dxg exists -> left off (NVIDIA, AMD, WSL GPU).
5. otherwise (incl. macOS: no Triton GPU backend) -> interpreter on.
"""

from __future__ import annotations

import os
import sys

GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/kfd", "/dev/dxg")
INTERPRETER_BACKENDS = ("cpu", "mps")


def triton_gpu_hint() -> bool:
    """True when a device node of a Triton GPU backend exists (cheap, no imports)."""
    if sys.platform == "darwin":
        return False
    return any(os.path.exists(node) for node in GPU_DEVICE_NODES)


def wants_interpreter(environ: os._Environ | dict | None = None) -> bool | None:
    """Whether portagpu should switch Triton's interpreter on; None: leave as is."""
    env = os.environ if environ is None else environ
    if "TRITON_INTERPRET" in env:
        return None
    requested = env.get("PORTAGPU_DEVICE", "").strip().lower()
    if requested in INTERPRETER_BACKENDS:
        return True
    if requested:
        return False
    return not triton_gpu_hint()


def set_triton_interpreter_default() -> None:
    """Called by `import portagpu`: set TRITON_INTERPRET=1 when no GPU can run Triton.

    Triton's knobs read the variable when `@triton.jit` runs, so this also
    covers kernels decorated after triton itself was imported.
    """
    if wants_interpreter():
        os.environ["TRITON_INTERPRET"] = "1"
