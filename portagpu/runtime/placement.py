"""Which GPU a launch runs on, when its tensors are not on the current one.

Torch runs an op on its tensors' device, under a device guard, on that
device's current stream. Triton's `kernel[grid](...)` (and a plain CuPy
RawKernel) run on the current device whatever the arguments are. portagpu's
launches follow torch: tensors on one GPU that is not the current one make it
current for the launch (compiled and loaded for it, its current stream) and
the previous device current again after; tensors on two GPUs are refused. The
checks cost only where the tensors are elsewhere: the launch code keys on the
current device index it reads anyway (triton_codegen.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from portagpu.errors import LaunchError


def gpu_index(value: Any) -> int | None:
    """The GPU index of a tensor on a GPU (torch, or anything that says
    `is_cuda` and `get_device()` like it); None for anything else."""
    if getattr(value, "is_cuda", False) is not True:
        return None
    try:
        index = value.get_device()
    except (AttributeError, TypeError, RuntimeError):
        return None
    return index if type(index) is int and index >= 0 else None


def elsewhere(
    current: Callable[[], int],
    values: Iterable[Any],
    names: Callable[[], Sequence[str]] | None = None,
    label: Callable[[int], str] = str,
    what: str = "launch",
) -> int | None:
    """The GPU the tensors among `values` are on when it is not `current()`
    (asked only when one is on a GPU); None when they are on the current
    GPU, none is on a GPU (host memory: the
    launcher says what is wrong), or there is no tensor. LaunchError naming
    each argument's device when they are on different GPUs: `names()` names
    the values (positions otherwise), `label` turns an index into a device
    name (cuda:1)."""
    seen: dict[int, list[int]] = {}
    for position, value in enumerate(values):
        index = gpu_index(value)
        if index is not None:
            seen.setdefault(index, []).append(position)
    if len(seen) > 1:
        known = list(names()) if names is not None else []

        def name(position: int) -> str:
            return known[position] if position < len(known) else f"argument {position}"

        where = "; ".join(
            f"{label(index)}: {', '.join(map(name, positions))}"
            for index, positions in sorted(seen.items())
        )
        raise LaunchError(
            f"{what}: tensor arguments are on different GPUs ({where}); move them to one "
            "device (a data_ptr() int is passed unchecked, for deliberate peer access)"
        )
    for index in seen:
        return None if index == current() else index
    return None


def run_on(
    switch: tuple[Callable[[], int], Callable[[int], int], Callable[[int], int]],
    index: int,
    function: Callable[..., Any],
    *args: Any,
) -> Any:
    """`function(*args)` with GPU `index` current (torch.cuda.device(index)'s
    calls: `switch` is the backend's device_switch_hooks()), then the previous
    device current again."""
    current, exchange, switch_back = switch
    previous = exchange(index)
    try:
        if current() != index:  # never recurse into the same mismatch
            raise LaunchError(
                f"could not make GPU {index} the current device (it stayed {current()})"
            )
        return function(*args)
    finally:
        switch_back(previous)
