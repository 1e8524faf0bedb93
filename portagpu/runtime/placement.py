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

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from portagpu.errors import LaunchError

if TYPE_CHECKING:
    from portagpu.backends.base import DeviceSwitch


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
    values: Sequence[Any],
    names: Sequence[str] = (),
    label: Callable[[int], str] = str,
    what: str = "launch",
) -> int | None:
    """The GPU the tensors among `values` are on when it is not `current()`
    (asked only when one is on a GPU); None when they are on the current
    GPU, none is on a GPU (host memory: the launcher says what is wrong), or
    there is no tensor. LaunchError naming each argument's device when they
    are on different GPUs: `names` name the values (positions otherwise),
    `label` turns an index into a device name (cuda:1). One pass with no
    allocation: the general launch path runs it on every call."""
    found = None
    for value in values:
        if getattr(value, "is_cuda", False) is True:
            index = gpu_index(value)
            if found is None:
                found = index
            elif index != found and index is not None:
                raise _two_gpus(values, names, label, what)
    if found is None:
        return None
    return None if found == current() else found


def _two_gpus(
    values: Sequence[Any], names: Sequence[str], label: Callable[[int], str], what: str
) -> LaunchError:
    seen: dict[int, list[str]] = {}
    for position, value in enumerate(values):
        index = gpu_index(value)
        if index is not None:
            name = names[position] if position < len(names) else f"argument {position}"
            seen.setdefault(index, []).append(name)
    where = "; ".join(f"{label(index)}: {', '.join(args)}" for index, args in sorted(seen.items()))
    return LaunchError(
        f"{what}: tensor arguments are on different GPUs ({where}); move them to one "
        "device (a data_ptr() int is passed unchecked, for deliberate peer access)"
    )


def run_on(switch: DeviceSwitch, index: int, function: Callable[..., Any], *args: Any) -> Any:
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
