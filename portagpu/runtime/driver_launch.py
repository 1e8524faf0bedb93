"""Triton launches that call the GPU driver directly (driver_launch.c).

Triton's C launcher parses every argument on every call (some twenty Python
objects: grid, stream, function, metadata tuples, hooks, each kernel
argument) before it calls the driver. Here a compiled kernel's parameters
are packed once per call site -- a launch from `prepare_launch`
(portagpu.kernels' plans), or one generated `portagpu.launch` fast path --
and a call passes only what varies to a small C function that writes it into
the packed parameters and calls the driver's launch function: the stream,
the tensors' addresses and, for `portagpu.launch`, the other arguments and
the grid.

Used only where it launches exactly what Triton's launcher would:
- the vendor's backend names its driver (`driver_launch_names`: NVIDIA's
  libcuda; not yet AMD, whose Triton launcher has not been checked here);
- Triton's launcher wrapper is one triton_direct knows, which fixes the
  kernel ABI (the parameters after the kernel's own: Triton 3.6 adds two
  scratch pointers) and says the kernel needs no scratch memory;
- one CTA per cluster, no cooperative grid, no programmatic dependent launch,
  parameters of plain types (pointers, ints, floats; no tuples or tensor
  descriptors);
- every global the kernel read at compile time (a `tl.constexpr` constant of
  its module) still has its value: the generated code checks, as it does for
  Triton's launcher, and a change goes to Triton, which raises;
- no launch hook installed (a profiler's hooks go through Triton's path);
- a call whose values the C function cannot convert (a grid of numpy ints,
  a negative grid) or a thread with no current context goes through Triton's
  launcher too, which raises what Triton raises.

The module is compiled once with Triton's own helper (the C compiler Triton
needs for its launchers anyway) and cached in Triton's cache; where it cannot
be built or the driver not opened, launches keep Triton's launcher.
`PORTAGPU_DRIVER_LAUNCH=0` turns it off (read when launch code is generated).
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
    """driver_launch.c bound to one driver: `prepare(...)` packs a launch once;
    `launch(prepared, stream, *values)` and `launch_grid(prepared, gx, gy, gz,
    stream, *values)` run it: True, or False having done nothing (the caller
    takes Triton's path: no current context, a value of another type)."""

    def __init__(self, module: Any, names: tuple[str, str, str, str]) -> None:
        self.names = names
        self.bound = module.bind(*names)
        self._prepare = module.prepare
        self.launch = module.launch
        self.launch_grid = module.launch_grid

    def prepare(self, function: int, grid: tuple[int, int, int], block: int, shared: int,
                packed: bytes, value_slots: tuple[int, ...], conversions: bytes) -> Any:
        return self._prepare(self.bound, function, grid, block, shared, packed, value_slots, conversions)


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


# How a value passed per call is converted into its slot (driver_launch.c's
# `fill`): p/u unsigned, i signed, f float32, d float64.
_VALUE_KINDS = {"i1": "i", "i8": "i", "i16": "i", "i32": "i", "i64": "i",
                "u1": "u", "u8": "u", "u16": "u", "u32": "u", "u64": "u",
                "fp32": "f", "f32": "f", "fp64": "d"}


def value_kind(kind: str) -> str | None:
    """The conversion of a per-call value of signature type `kind`."""
    return "p" if kind.startswith("*") else _VALUE_KINDS.get(kind)


def slots(kinds: list[str], values: list[Any], passed: tuple[int, ...],
          scratch: int) -> tuple[bytes, tuple[int, ...], bytes] | None:
    """The packed parameters of a kernel whose signature types are `kinds`
    (one per argument, "constexpr" for those compiled in) with the fixed
    argument `values`, and how a call's values -- those of the arguments at
    positions `passed`, in order -- are written: the slot of each (-1 for an
    argument Triton compiled in, such as an int equal to 1) and its conversion.
    `scratch` null pointers follow the arguments. None when a parameter cannot
    be packed or a passed value converted."""
    packed: list[bytes] = []
    value_slots: list[int] = []
    conversions = []
    for position, (kind, value) in enumerate(zip(kinds, values, strict=True)):
        if position in passed:
            if kind == "constexpr":  # compiled in (an int equal to 1): the call's value is dropped
                value_slots.append(-1)
                conversions.append("p")
                continue
            conversion = value_kind(kind)
            if conversion is None:
                return None
            value_slots.append(len(packed))
            conversions.append(conversion)
            packed.append(bytes(8))
            continue
        if kind == "constexpr":
            continue
        slot = pack(value, kind)
        if slot is None:
            return None
        packed.append(slot)
    packed += [bytes(8)] * scratch
    if len(packed) > MAX_SLOTS or len(value_slots) > MAX_SLOTS:
        return None
    return b"".join(packed), tuple(value_slots), "".join(conversions).encode()


def prepared(driver: Driver, entry: tuple, values: list[Any], passed: tuple[int, ...],
             grid: tuple = (1, 1, 1)) -> Any | None:
    """A prepared driver launch of the compiled kernel in a fast-path cache
    `entry`, with the fixed argument `values` (tensors as addresses) and the
    arguments at positions `passed` given per call: driver.launch(prepared,
    stream, *passed values) on `grid`, or driver.launch_grid(prepared, gx, gy,
    gz, stream, *passed values). None where Triton's launcher must run it."""
    from portagpu.runtime.triton_direct import scratch_pointers

    run, function, _, compiled, _, direct, cooperative, pdl = entry
    scratch = scratch_pointers(run)
    if direct is None or scratch is None or cooperative or pdl:
        return None
    size = tuple(grid) + (1,) * (3 - len(grid))
    try:
        metadata = compiled.metadata
        if getattr(metadata, "num_ctas", 1) != 1 or min(size) <= 0:
            return None
        signature = compiled.src.signature
        kinds = [signature[name] for name in compiled.src.fn.arg_names]
        block = metadata.num_warps * metadata.target.warp_size
        shared = metadata.shared
    except (AttributeError, KeyError, TypeError):  # another Triton's compiled kernel
        return None
    if not all(isinstance(kind, str) for kind in kinds):  # tuples of arguments
        return None
    packed = slots(kinds, values, passed, scratch)
    if packed is None or not isinstance(function, int):
        return None
    return driver.prepare(function, size, block, shared, *packed)
