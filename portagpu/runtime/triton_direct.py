"""Calling a compiled Triton kernel's C launcher without its Python wrapper.

`CompiledKernel.run` is a Python object (Triton's `CudaLauncher`) whose
`__call__` allocates scratch buffers when the kernel needs them and then calls
the C function `launch` it holds. For a kernel that needs no scratch that C
call is the whole launch, and calling it directly saves the wrapper's Python
(1-2 us on the H200 hosts measured, benchmarks/results/launch_overhead.json).

The wrapper's argument list differs between Triton versions, so the C
function is called directly only when the wrapper's source is one verified
here, by digest; any other Triton keeps calling `run`. Verified on the GPU
machine: `tests/runtime/test_gpu.py` checks that the direct path is taken with
the installed Triton and gives the same results.
"""

from __future__ import annotations

import hashlib
import inspect
import textwrap
from functools import cache
from typing import Any

# sha256 of the dedented source of the launcher class's `__call__`, for
# wrappers that do exactly this when no scratch is needed:
#   launch(gridX, gridY, gridZ, stream, function, launch_cooperative_grid,
#          launch_pdl, None, None, *args)
# where args = (packed metadata, launch metadata, enter hook, exit hook,
# kernel arguments...) as passed to `run`.
KNOWN_WRAPPERS: dict[str, str] = {
    "ead77febd3d441d474bb8bc0126006c821d25c5ba32235acd60673c9cb83cc78": "Triton 3.6 CudaLauncher",
}

# The kernel ABI behind a known wrapper, for launching its compiled kernels
# without Triton's C launcher (driver_launch.py): how many pointers Triton
# passes after the kernel's own arguments (3.6: global and profile scratch,
# null when the kernel needs none).
SCRATCH_POINTERS: dict[str, int] = {
    "ead77febd3d441d474bb8bc0126006c821d25c5ba32235acd60673c9cb83cc78": 2,
}


def wrapper_digest(launcher_class: type) -> str | None:
    """The digest KNOWN_WRAPPERS is keyed by, or None without source."""
    try:
        source = inspect.getsource(launcher_class.__call__)
    except (OSError, TypeError, AttributeError):
        return None
    return hashlib.sha256(textwrap.dedent(source).encode()).hexdigest()


@cache
def _digest(launcher_class: type) -> str | None:
    return wrapper_digest(launcher_class)  # reads the source: once per class


@cache
def _known(launcher_class: type) -> bool:
    return _digest(launcher_class) in KNOWN_WRAPPERS


def scratch_pointers(run: Any) -> int | None:
    """SCRATCH_POINTERS for `run`'s wrapper; None for a wrapper not known there."""
    if not _known(type(run)):
        return None
    return SCRATCH_POINTERS.get(_digest(type(run)) or "")


def direct_launch(run: Any) -> tuple[Any, Any, Any] | None:
    """(C launch, launch_cooperative_grid, launch_pdl) when `run` may be
    bypassed for this compiled kernel (a known wrapper, no scratch buffers);
    None when `run` must be called."""
    try:
        if not _known(type(run)) or run.global_scratch_size or run.profile_scratch_size:
            return None
        return run.launch, run.launch_cooperative_grid, run.launch_pdl
    except (AttributeError, TypeError):
        return None
