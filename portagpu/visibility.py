"""Which GPUs a process may use: the visible-device variables, read the way
each vendor's runtime reads them, and `restrict_visible_devices()`.

The variables are vendor facts held by the backends (portagpu/backends):

* NVIDIA: CUDA_VISIBLE_DEVICES, a list of indices or UUIDs (GPU-..., MIG-...).
* AMD: ROCR_VISIBLE_DEVICES is applied first, by the ROCm runtime (indices or
  UUIDs); HIP_VISIBLE_DEVICES then selects within ROCR's list, and HIP reads
  CUDA_VISIBLE_DEVICES as the same filter. When HIP_ and CUDA_ both are set and
  differ, the ROCm runtime aborts ("Conflicting visibility of agent-N") or
  PyTorch follows HIP_ alone; ROCR_ together with CUDA_ alone makes PyTorch
  count ROCR's list while HIP filters it again ("No HIP GPUs are available").
  portagpu raises VisibilityError for both instead.
* MPS and CPU have no such variable.

The list syntax follows the CUDA runtime: entries separated by commas, an
entry that is not an index or UUID ends the list, a repeated entry hides every
device, an index past the last device ends the list.

The variables take effect when the GPU runtime initialises: set them in a
launcher for its children, or before the first CUDA/HIP call of the process.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass

from portagpu.errors import VisibilityError

_INDEX = re.compile(r"^\+?(\d+)")  # strtoul's reading: "1gpu" is 1
_UUID_PREFIXES = ("GPU-", "MIG-")


def parse(value: str) -> list[str]:
    """Entries of a visible-devices list: index strings ("0") and UUIDs."""
    entries: list[str] = []
    for raw in value.split(","):
        item = raw.strip()
        if item.upper().startswith(_UUID_PREFIXES):
            entry = item
        else:
            match = _INDEX.match(item)
            if match is None:
                break  # not an index (negative, empty, a typo): the list ends here
            entry = str(int(match.group(1)))
        if entry in entries:
            return []  # CUDA: a repeated device hides every device
        entries.append(entry)
    return entries


@dataclass(frozen=True)
class Mask:
    """The visible-device variables in effect for one backend."""

    backend: str
    outer: tuple[str, ...] | None  # ROCR_VISIBLE_DEVICES's entries; None: unset
    inner: tuple[str, ...] | None  # the vendor variable's (or its alias's) entries
    variables: tuple[tuple[str, str], ...]  # (name, value) of each variable set

    @property
    def restricted(self) -> bool:
        return self.outer is not None or self.inner is not None

    def describe(self) -> str:
        return " ".join(f"{k}={v!r}" for k, v in self.variables) or "no visible-device variable"


def _backend(name: str | None):  # -> Backend; untyped here to keep imports light
    from portagpu.backends import get_backend

    if name is None:
        from portagpu.device import detect

        name = detect().backend
    try:
        return get_backend(name)
    except KeyError as exc:
        raise VisibilityError(str(exc.args[0])) from None


def read(backend: str | None = None, environ: MutableMapping[str, str] | None = None) -> Mask:
    """The mask `environ` (default: this process's) sets for `backend` (default:
    the detected one). Raises VisibilityError when its variables conflict."""
    env = os.environ if environ is None else environ
    vendor = _backend(backend)
    if vendor.visible_devices_var is None:
        return Mask(vendor.name, None, None, ())
    inner_names = (vendor.visible_devices_var, *vendor.visible_devices_aliases)
    names = (*vendor.visible_devices_outer, *inner_names)
    variables = tuple((name, env[name]) for name in names if name in env)
    given = {name: parse(value) for name, value in variables if name in inner_names}
    if len({tuple(v) for v in given.values()}) > 1:
        shown = " and ".join(f"{k}={env[k]!r}" for k in given)
        raise VisibilityError(
            f"{shown} are both set and differ: on {vendor.display_name} the runtime treats them "
            f"as one filter (ROCm aborts with 'Conflicting visibility', PyTorch follows "
            f"{vendor.visible_devices_var}); set only {vendor.visible_devices_var}"
        )
    inner = next(iter(given.values()), None)
    outer_values = [(k, v) for k, v in variables if k in vendor.visible_devices_outer]
    outer = parse(outer_values[0][1]) if outer_values else None
    if outer is not None and inner is not None:
        outer_name = outer_values[0][0]
        if vendor.visible_devices_var not in given:
            alias = next(iter(given))
            raise VisibilityError(
                f"{outer_name}={env[outer_name]!r} and {alias}={env[alias]!r} are both set: HIP "
                f"applies {alias} within {outer_name}'s list while PyTorch counts {outer_name}'s "
                f"list alone ('No HIP GPUs are available'); use {vendor.visible_devices_var} "
                f"(indices within {outer_name}'s list) or unset one of them"
            )
        if len(inner) > len(outer):
            raise VisibilityError(
                f"{vendor.visible_devices_var}={env[vendor.visible_devices_var]!r} lists more "
                f"devices than {outer_name}={env[outer_name]!r} exposes (PyTorch raises the same)"
            )
    return Mask(
        vendor.name,
        None if outer is None else tuple(outer),
        None if inner is None else tuple(inner),
        variables,
    )


def masked(backend: str, environ: MutableMapping[str, str] | None = None) -> bool:
    """Whether any visible-device variable of `backend` is set (cheap)."""
    env = os.environ if environ is None else environ
    vendor = _backend(backend)
    names = (*vendor.visible_devices_outer, vendor.visible_devices_var,
             *vendor.visible_devices_aliases)  # fmt: skip
    return any(name in env for name in names if name)


def _resolve(
    entries: Iterable[str], candidates: list[int], uuid_of: Callable[[int], str | None] | None
) -> list[int] | None:
    """Physical indices `entries` pick among `candidates`; None when an entry
    cannot be resolved here (a UUID with no way to read UUIDs, a MIG instance)."""
    chosen: list[int] = []
    for entry in entries:
        if entry.isdigit():
            position = int(entry)
            if position >= len(candidates):
                break  # past the last device: the list ends here
            found = candidates[position]
        else:
            if uuid_of is None or entry.upper().startswith("MIG-"):
                return None
            wanted = entry.lower()
            matches = [c for c in candidates if (uuid_of(c) or "").lower().startswith(wanted)]
            if len(matches) != 1:
                break  # unknown or ambiguous UUID prefix: the list ends here
            found = matches[0]
        if found in chosen:
            return []
        chosen.append(found)
    return chosen


def visible_physical(
    backend: str,
    count: int,
    uuid_of: Callable[[int], str | None] | None = None,
    environ: MutableMapping[str, str] | None = None,
) -> list[int] | None:
    """Physical indices (as a management library such as NVML or amdsmi numbers
    them) of the devices this process sees, in the runtime's order; None when
    the variables cannot be resolved here or conflict (ask the runtime)."""
    try:
        mask = read(backend, environ)
    except VisibilityError:
        return None
    chosen: list[int] | None = list(range(count))
    for entries in (mask.outer, mask.inner):
        if entries is not None and chosen is not None:
            chosen = _resolve(entries, chosen, uuid_of)
    return chosen


def _gpu_runtime_started() -> bool:
    from portagpu.backends._common import loaded, torch_cuda_initialized

    return torch_cuda_initialized(loaded("torch"))


def restrict_visible_devices(
    indices: Iterable[int],
    *,
    backend: str | None = None,
    environ: MutableMapping[str, str] | None = None,
) -> dict[str, str | None]:
    """Restrict a process to the local GPUs `indices` (numbered as it sees
    them now) with the variable right for the vendor.

    Writes CUDA_VISIBLE_DEVICES on NVIDIA and HIP_VISIBLE_DEVICES on AMD; an
    existing mask is composed with (index 0 of CUDA_VISIBLE_DEVICES=2,3 is GPU
    2), CUDA_VISIBLE_DEVICES on AMD is folded into HIP_VISIBLE_DEVICES and
    removed, ROCR_VISIBLE_DEVICES is kept (HIP indices count within it). MPS and
    CPU have no variable: nothing is written. `environ` (default: this
    process's environment) may be a child process's environment. Returns the
    variables written (None: removed). Raises VisibilityError on conflicting
    variables, an index the process cannot see, or a GPU runtime that already
    started in this process (the variables would be ignored).
    """
    wanted = list(indices)
    if not wanted or any(type(i) is not int or i < 0 for i in wanted):
        raise VisibilityError(f"device indices must be non-negative ints, got {wanted!r}")
    if len(set(wanted)) != len(wanted):
        raise VisibilityError(f"device indices repeat: {wanted!r} (CUDA would then hide every GPU)")
    env = os.environ if environ is None else environ
    vendor = _backend(backend)
    mask = read(vendor.name, env)
    var = vendor.visible_devices_var
    if var is None:
        return _no_variable(vendor, wanted)
    current = mask.inner
    if current is not None and max(wanted) >= len(current):
        raise VisibilityError(
            f"device {max(wanted)} is not visible: {mask.describe()} leaves {len(current)}"
        )
    new = (
        ",".join(current[i] for i in wanted) if current is not None else ",".join(map(str, wanted))
    )
    changes: dict[str, str | None] = {var: new}
    changes.update({alias: None for alias in vendor.visible_devices_aliases if alias in env})
    if env is os.environ and _gpu_runtime_started():
        raise VisibilityError(
            f"{var} cannot change this process's GPUs any more: torch has already started "
            f"{vendor.display_name} here; restrict before the first GPU call, or pass the "
            f"child's environment (environ=) in a launcher"
        )
    apply_env(env, changes)
    if env is os.environ and "portagpu.device" in sys.modules:
        sys.modules["portagpu.device"].clear_cache()
    return changes


def apply_env(environ: MutableMapping[str, str], changes: dict[str, str | None]) -> None:
    """Write `changes` into `environ`; a None value removes the variable."""
    for name, value in changes.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


def _no_variable(vendor, wanted: list[int]) -> dict[str, str | None]:
    """MPS and CPU: nothing to write. Every process shares the CPU; an MPS
    index past the one GPU is an error."""
    found = vendor.probe(force=True)
    if found and not found[0].is_gpu:
        return {}
    if max(wanted) >= len(found):
        raise VisibilityError(
            f"{vendor.display_name} has {len(found)} device(s) and no visible-device variable; "
            f"cannot restrict to {wanted}"
        )
    return {}
