"""Prepared Triton launches that call the GPU driver directly (driver_launch.c).

A launch from `prepare_launch` (portagpu.kernels' plans) fixes everything but
its tensors. Triton's C launcher still parses every argument on every call
(some twenty Python objects) before it calls the driver; here the kernel's
parameters are packed once, per compiled kernel and prepared launch, and a
call passes only the stream and the tensors' addresses to a small C function
that writes them into their slots and calls the driver's launch function.

Used only where it launches exactly what Triton's launcher would:
- the vendor's backend names its driver (`driver_launch_names`: NVIDIA's
  libcuda; not yet AMD, whose Triton launcher has not been checked here);
- Triton's launcher wrapper is one triton_direct knows, which fixes the
  kernel ABI (the parameters after the kernel's own: Triton 3.6 adds two
  scratch pointers) and says the kernel needs no scratch memory;
- one CTA per cluster, no cooperative grid, no programmatic dependent launch,
  a non-empty grid, parameters of plain types (pointers, ints, floats);
- no launch hook installed (a profiler's hooks go through Triton's path).

The module is compiled once with Triton's own helper (the C compiler Triton
needs for its launchers anyway) and cached in Triton's cache; where it cannot
be built or the driver not opened, launches keep Triton's launcher.
`PORTAGPU_DRIVER_LAUNCH=0` turns it off (read when a launch is prepared).
"""

from __future__ import annotations

import os
import struct
from functools import cache
from importlib import resources
from typing import Any

ENV_SWITCH = "PORTAGPU_DRIVER_LAUNCH"
MAX_SLOTS = 64  # driver_launch.c's MAX_SLOTS

# How a parameter of each Triton signature type is packed into its 8-byte slot
# (the driver reads as many bytes as the parameter has, from the slot's start).
_SLOT_FORMATS = {
    "i1": "<b", "i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q",
    "u1": "<B", "u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q",
    "fp16": "<e", "fp32": "<f", "f32": "<f", "fp64": "<d",
}

_why_not: dict[tuple[str, ...], str] = {}


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


class Driver:
    """driver_launch.c bound to one driver: `prepare(...)` packs a launch once,
    `launch(prepared, stream, *addresses)` runs it (True; False, doing
    nothing, where the calling thread has no current context)."""

    def __init__(self, module: Any, names: tuple[str, str, str, str]) -> None:
        self.names = names
        self.bound = module.bind(*names)
        self._prepare = module.prepare
        self.launch = module.launch

    def prepare(self, function: int, grid: tuple[int, int, int], block: int, shared: int,
                packed: bytes, varying_slots: tuple[int, ...]) -> Any:
        return self._prepare(self.bound, function, grid, block, shared, packed, varying_slots)


@cache
def driver(names: tuple[str, str, str, str]) -> Driver | None:
    """driver_launch.c, compiled once, bound to the driver `names` (library,
    launch, context and error functions); None where it cannot be built or
    bound (the reason: why_not(names))."""
    try:
        from triton.runtime.build import compile_module_from_src

        source = resources.files("portagpu.runtime").joinpath("driver_launch.c").read_text()
        module = compile_module_from_src(source, "portagpu_driver_launch", libraries=["dl"])
        return Driver(module, names)
    except Exception as error:  # noqa: BLE001 - no compiler, no driver, an older Triton: keep Triton's path
        _why_not[names] = f"{type(error).__name__}: {error}"
        return None


def why_not(names: tuple[str, str, str, str]) -> str | None:
    """Why driver(names) is None (None when it is not, or was not asked)."""
    return _why_not.get(names)


def pack(value: Any, kind: str) -> bytes | None:
    """One parameter's 8-byte slot; None for a type this launcher does not pack."""
    if kind.startswith("*"):  # a pointer: a tensor's address or a plain int
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        return struct.pack("<Q", value)
    if kind == "bf16":  # bfloat16: the upper half of the float32 bits, as Triton packs it
        return struct.pack("<I", struct.unpack("<I", struct.pack("<f", value))[0] >> 16) + bytes(4)
    fmt = _SLOT_FORMATS.get(kind)
    if fmt is None:
        return None
    try:
        packed = struct.pack(fmt, value)
    except (struct.error, TypeError):
        return None
    return packed + bytes(8 - len(packed))


def slots(kinds: list[str], values: list[Any], varying: tuple[int, ...], scratch: int) -> tuple[bytes, tuple[int, ...]] | None:
    """The packed parameters of a kernel whose signature types are `kinds` (one
    per argument, "constexpr" for those compiled in), for argument `values`,
    and the slots of the arguments at positions `varying` (pointers the call
    passes), followed by `scratch` null pointers; None when one cannot be packed."""
    packed, varying_slots = [], []
    for position, (kind, value) in enumerate(zip(kinds, values, strict=True)):
        if kind == "constexpr":
            if position in varying:
                return None
            continue
        if position in varying:
            if not kind.startswith("*"):
                return None
            varying_slots.append(len(packed))
            value = 0
        slot = pack(value, kind)
        if slot is None:
            return None
        packed.append(slot)
    packed += [bytes(8)] * scratch
    if len(packed) > MAX_SLOTS:
        return None
    return b"".join(packed), tuple(varying_slots)


def prepared(driver: Driver, entry: tuple, values: list[Any], varying: tuple[int, ...], grid: tuple) -> Any | None:
    """A prepared driver launch (for driver.launch(prepared, stream,
    *addresses)) of the compiled kernel in a fast-path cache `entry`, with
    argument `values` (tensors as addresses) and the tensors at `varying`
    passed per call; None where Triton's launcher must run it."""
    from portagpu.runtime.triton_direct import scratch_pointers

    run, function, _, compiled, used_globals, direct, cooperative, pdl = entry
    scratch = scratch_pointers(run)
    if direct is None or scratch is None or used_globals or cooperative or pdl:
        return None
    size = tuple(grid) + (1,) * (3 - len(grid))
    try:
        metadata = compiled.metadata
        if getattr(metadata, "num_ctas", 1) != 1 or size[0] * size[1] * size[2] <= 0:
            return None
        signature = compiled.src.signature
        kinds = [signature[name] for name in compiled.src.fn.arg_names]
        block = metadata.num_warps * metadata.target.warp_size
        shared = metadata.shared
    except (AttributeError, KeyError, TypeError):  # another Triton's compiled kernel
        return None
    if not all(isinstance(kind, str) for kind in kinds):  # tuples of arguments
        return None
    packed = slots(kinds, values, varying, scratch)
    if packed is None:
        return None
    return driver.prepare(function, size, block, shared, *packed)
