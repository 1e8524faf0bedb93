"""Generated launch code for the Triton fast path (see triton_launch.py).

Two kinds of straight-line function, written once with `exec` (as Triton's
own binder does) and kept by the launcher:

- `make_fast_launch`: for `portagpu.launch` calls of one shape (positional
  count, `meta` keys) and argument-type pattern; it builds the fast-path key
  from every argument on each call.
- `make_bound_launch`: for a caller that fixes everything but some tensor
  arguments (portagpu.kernels, per call shape); constexprs, options, ints and
  the grid are constants of the code, so the key is the device and, per
  tensor, its dtype and 16-byte alignment.

Both launch as `JITFunction.run` does, with two shortcuts when no launch hook
is set: tensors on the GPU are passed as their addresses (read for the key
anyway; Triton's launcher would call data_ptr() and look each pointer up in
the driver again), and the C launcher is called without its Python wrapper
where triton_direct knows that wrapper.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from portagpu.runtime.placement import elsewhere, run_on

if TYPE_CHECKING:
    from portagpu.runtime.triton_launch import TritonLauncher

_MISSING = object()

# One key element per int, as fine as Triton's specialisation: -1 for the
# value 1; otherwise the range (i32 0, i64 2, u64 4) plus 1 when divisible by
# 16 (True/False for i32, the common case, is cheapest to compute). The first
# test takes the common case (a positive i32 other than 1) in one chained
# comparison; the rest gives every other int the same value as before.
_INT_SPEC = (
    "{v} & 15 == 0 if 1 < {v} <= 2147483647 else "
    "-1 if {v} == 1 else {v} & 15 == 0 if -2147483648 <= {v} <= 2147483647 "
    "else 2 + ({v} & 15 == 0) + 2 * ({v} >= 9223372036854775808)"
)


def alignment_key(addresses: list[str]) -> str:
    """One key element for the 16-byte alignment of every address: True when
    all are aligned (one test for the common case), else a tuple of flags."""
    if not addresses:
        return "True"
    if len(addresses) == 1:
        return f"{addresses[0]} & 15 == 0"
    flags = ", ".join(f"{a} & 15 == 0" for a in addresses)
    return f"({' | '.join(addresses)}) & 15 == 0 or ({flags})"


def hooks_idle(hook: Any) -> bool:
    """No launch hook to run: None (older Triton) or an empty HookChain."""
    return hook is None or not getattr(hook, "calls", True)


def globals_changed(used_globals: dict) -> bool:
    """A global the kernel read at compile time has another value now."""
    for (name, _), (value, scope) in used_globals.items():
        if scope.get(name, _MISSING) != value:
            return True
    return False


def current_device_line(launcher: TritonLauncher, home: int | None = None) -> str:
    """The line binding `dev`, the current device index: a constant where
    torch sees one GPU (index 0 is the only one there, and the one a prepared
    launch's `home` names), else asked for."""
    one = launcher.one_gpu and home in (None, 0)
    return "dev = 0  # the one GPU" if one else "dev = get_device()"


def _never(grid: Any, args: tuple, num_warps: Any, meta: dict) -> bool:
    return False


def _scope(launcher: TritonLauncher, tensor_names: tuple[str, ...] = ()) -> dict[str, Any]:
    """Names the generated code uses (`tensor_names`: of the tensors it keys,
    for the message about tensors on two GPUs)."""
    knobs = launcher.knobs
    return {
        "elsewhere": elsewhere,
        "NAMES": tensor_names,
        "LABEL": launcher.backend.torch_device,
        "WHAT": launcher.name,
        "kernel": launcher.kernel,
        "cache_get": launcher.cache.get,
        "remember": launcher._remember,
        "native": launcher._native,
        "get_device": launcher.current_device,
        "get_stream": launcher.current_stream,
        "rt": knobs,
        "ENTER": knobs.launch_enter_hook,
        "LEAVE": knobs.launch_exit_hook,
        "globals_changed": globals_changed,
        "TAG": object(),
    }


def _launch_lines(
    launcher: TritonLauncher,
    params: list[str],
    tensors: list[int],
    *,
    key_head: str,
    grid: list[str],
    grid_name: str,
    native_args: str,
    refuse: str,
    fixed_tensors: tuple[int, ...] = (),
    trusted: bool = False,
    home: bool = False,
    driver_call: str | None = None,
) -> list[str]:
    """From the key to the launch, once `dev` and the parameters are bound:
    read the tensors' addresses, look the key (`key_head` + each tensor's
    dtype, + one element for their alignment) up, compile through Triton on a
    miss (`native_args`), else launch on the grid the `grid` lines bind (g0,
    g1, g2). `refuse` is the statement for a call this code must not launch.
    `fixed_tensors` are GPU tensors whose address the code holds as a
    constant (a{i}). `trusted`: the caller vouches that the tensors are on the
    GPU and have the dtypes of the first call (portagpu.kernels: a plan per
    dtype and device), so neither is read.

    Which GPU (placement.py): untrusted code compares each tensor's device
    with the current one and refuses tensors on another GPU (the general
    path runs them there; two GPUs raise LaunchError in `elsewhere`).
    `home`: trusted code for tensors on GPU HOME compares the current device
    with HOME only on a miss, and runs `away` (itself under HOME) there: a
    key with another device is never remembered, so a hit is on HOME.

    `driver_call`: the code may launch through driver_launch.c with this
    call (of `prepared`, the prepared driver launch `driver_for(entry)` gives
    for a cache entry, or None); it returns False where Triton's launcher
    must run the launch (see driver_launch.py), as it does for a tensor not
    on the GPU or a launch hook."""
    driver = driver_call is not None
    p = params
    addresses = ", ".join(
        f"a{i}" if i in tensors or i in fixed_tensors else p[i] for i in range(len(p))
    )
    every = ", ".join(p)
    dtypes = "" if trusted else "".join(f"{p[i]}.dtype, " for i in tensors)
    # on the current GPU: get_device() is -1 in host memory, another index on another GPU
    on_gpu = (
        "True"
        if trusted
        else " and ".join(f"{p[i]}.get_device() == dev" for i in tensors) or "True"
    )
    # No launch hook installed (a profiler adds them): pass None, as Triton's
    # launcher does nothing with an empty chain. Triton with HookChain knobs:
    # the chains of configure time, still empty; older Triton: None.
    idle = (
        "not ENTER.calls and not LEAVE.calls and rt.launch_enter_hook is ENTER "
        "and rt.launch_exit_hook is LEAVE"
        if hasattr(launcher.knobs.launch_enter_hook, "calls")
        else "rt.launch_enter_hook is None and rt.launch_exit_hook is None"
    )
    dims = "g0, g1, g2, stream, function"
    launch_on_gpu = [
        "    if direct is not None:",
        f"        direct({dims}, coop, pdl, None, None, packed, None, None, None, {addresses})",
        "    else:",
        f"        run({dims}, packed, None, None, None, {addresses})",
    ]
    if not trusted:
        launch_on_gpu = [
            "    if not on_gpu:  # Triton's launcher checks where each tensor lives",
            f"        run({dims}, packed, None, None, None, {every})",
            "    el" + launch_on_gpu[0].lstrip(),
            *launch_on_gpu[1:],
        ]
    return [
        "try:",
        *[f"    a{i} = {p[i]}.data_ptr()" for i in tensors],
        f"    key = {key_head}{dtypes}{alignment_key([f'a{i}' for i in tensors])})",
        # the key of the last hit and its entry: a loop repeating one launch
        # compares two tuples instead of hashing one
        "    if key == HOT:",
        "        entry = HOT_ENTRY",
        *(["        prepared = HOT_PREPARED"] if driver else []),
        "    else:",
        "        entry = cache_get(key)",
        "        if entry is not None:",
        *(
            ["            prepared = driver_for(entry)", "            HOT, HOT_ENTRY, HOT_PREPARED = key, entry, prepared"]
            if driver
            else ["            HOT, HOT_ENTRY = key, entry"]
        ),
        *([] if trusted else [f"    on_gpu = {on_gpu}"]),
        "except (AttributeError, TypeError, ValueError):  # not a tensor where one was; odd constexpr",
        f"    {refuse}",
        *(
            []
            if trusted
            else [
                f"if not on_gpu and elsewhere(get_device, ({''.join(f'{p[i]}, ' for i in tensors)}), NAMES, LABEL, WHAT) "
                "is not None:",
                f"    {refuse}  # on another GPU: the general path runs it there",
            ]
        ),
        "if entry is None:",
        *(
            ["    if dev != HOME:", "        return away(" + ", ".join(p[i] for i in tensors) + ")"]
            if home
            else []
        ),
        f"    remember(key, native({native_args}))",
        "    return True",
        *grid,
        *(
            [
                # a global the kernel read at compile time that changed since: Triton's path raises
                f"if prepared is not None and {'' if trusted else 'on_gpu and '}{idle} "
                f"and not (entry[4] and globals_changed(entry[4])) and {driver_call}:",
                "    return True",
            ]
            if driver
            else []
        ),
        "run, function, packed, compiled, used_globals, direct, coop, pdl = entry",
        "if used_globals and globals_changed(used_globals):",
        f"    {refuse}",
        "stream = get_stream(dev)",
        f"if {idle}:",
        *launch_on_gpu,
        "else:",
        "    enter = rt.launch_enter_hook",
        "    leave = rt.launch_exit_hook",
        f"    run({dims}, packed, compiled.launch_metadata({grid_name}, stream, {every}), enter, leave, {every})",
        "return True",
    ]


def _compile(
    launcher: TritonLauncher, signature: str, body: list[str], scope: dict
) -> Callable[..., bool]:
    hot = ("HOT", "HOT_ENTRY", "HOT_PREPARED") if "driver_for" in scope else ("HOT", "HOT_ENTRY")
    scope.update(dict.fromkeys(hot))
    body = [f"global {', '.join(hot)}", *body]
    source = f"def {signature}:\n" + "".join(f"    {line}\n" for line in body)
    name = getattr(launcher.base, "__name__", "?")
    exec(compile(source, f"<portagpu launch of {name}>", "exec"), scope)
    function = scope[signature.split("(")[0]]
    function.source = source  # for debugging: print(function.source)
    return function


def make_fast_launch(
    launcher: TritonLauncher,
    nargs: int,
    plan: tuple,
    args: tuple,
    meta: dict,
    first_grid: Any = None,
) -> Callable[..., bool] | None:
    """Straight-line launch code for one call shape and argument-type pattern.

    The shape is the positional count and the `meta` keys; the pattern is the
    exact type of each non-constexpr argument in this call. The function
    returns False, having done nothing, for a call it was not made for (other
    keys or types, a pre-run hook, a changed global, an unhashable constexpr):
    the caller then takes the general path. Its key is as fine as
    `TritonLauncher._fast`'s (in its own layout, prefixed with its own tag).
    The grid is unpacked in one step when it is a tuple of `first_grid`'s
    length. None when the pattern has a type it cannot key."""
    fill, option_names, constexpr = plan
    names = launcher.names
    tensor = launcher.tensor_type
    values = list(args) + [meta[x] if from_meta else x for from_meta, x in fill]
    scope = _scope(launcher)
    scope.update({"warps_get": launcher.warps.get, "scale_warps": launcher.scale_warps})
    p = [f"p{i}" for i in range(len(names))]
    body = [f"if kernel.pre_run_hooks or len(meta) != {len(meta)}:", "    return False"]
    if nargs:
        body.append(f"{', '.join(p[:nargs])}, = args")
    body.append("try:")
    body += [
        f"    {p[nargs + i]} = meta[{x!r}]" for i, (from_meta, x) in enumerate(fill) if from_meta
    ]
    body += [f"    o{i} = meta[{k!r}]" for i, k in enumerate(option_names)]
    body += ["    pass", "except KeyError:", "    return False"]
    for i, (from_meta, x) in enumerate(fill):
        if not from_meta:
            scope[f"d{nargs + i}"] = x
            body.append(f"{p[nargs + i]} = d{nargs + i}")
    guards, head = [], ["TAG", "dev", "nw", *[f"o{i}" for i in range(len(option_names))]]
    tensors: list[int] = []
    for i, (value, is_constexpr) in enumerate(zip(values, constexpr, strict=True)):
        if is_constexpr:
            head += [p[i], f"type({p[i]})"]
            continue
        kind = type(value)
        if isinstance(value, tensor):
            # No type guard: like Triton, anything with .dtype and .data_ptr()
            # is keyed as a tensor; anything else raises AttributeError below.
            tensors.append(i)
        elif kind is int:
            guards.append(f"type({p[i]}) is int")
            head.append(_INT_SPEC.format(v=p[i]))
        elif kind in (float, bool):
            guards.append(f"type({p[i]}) is {kind.__name__}")
            head.append(kind.__name__)
        elif value is None:
            guards.append(f"{p[i]} is None")
            head.append("None")
        else:
            return None
    scope["NAMES"] = tuple(names[i] for i in tensors)
    if guards:
        body += [f"if not ({' and '.join(guards)}):", "    return False"]
    grid_dict = "{" + ", ".join(f"{name!r}: {p[i]}" for i, name in enumerate(names)) + "}"
    general_grid = [
        "if type(grid) is not tuple and callable(grid):",
        f"    grid = grid({grid_dict})",
        "size = len(grid)",
        "g0 = grid[0]",
        "g1 = grid[1] if size > 1 else 1",
        "g2 = grid[2] if size > 2 else 1",
    ]
    grid = general_grid
    if type(first_grid) is tuple and 1 <= len(first_grid) <= 3:
        # the first call's kind of grid (a tuple of this length) unpacked in one step
        size = len(first_grid)
        unpacked = ", ".join(f"g{i}" for i in range(size))
        grid = [
            f"if type(grid) is tuple and len(grid) == {size}:",
            f"    {unpacked}, = grid",
            *[f"    g{i} = 1" for i in range(size, 3)],
            "else:",
            *[f"    {line}" for line in general_grid],
        ]
    # the arguments a driver launch is given per call: all but the constexprs and Nones
    passed = tuple(i for i, (value, is_constexpr) in enumerate(zip(values, constexpr, strict=True))
                   if not is_constexpr and value is not None)
    driver = _driver_scope(launcher, scope, [None] * len(values), passed)
    driver_values = ", ".join(f"a{i}" if i in tensors else p[i] for i in passed)
    body += [
        "if num_warps is None:",
        "    nw = None",
        "else:",
        "    nw = warps_get(num_warps) if type(num_warps) is int else None",
        "    if nw is None:",
        "        nw = scale_warps(num_warps)",
        current_device_line(launcher),
        *_launch_lines(
            launcher,
            p,
            tensors,
            key_head=f"({', '.join(head)}, ",
            grid=grid,
            grid_name="grid",
            native_args="grid, args, nw, None, meta",
            refuse="return False",
            driver_call=f"drive_grid(prepared, g0, g1, g2, get_stream(dev), {driver_values})" if driver else None,
        ),
    ]
    return _compile(launcher, "fast_launch(grid, args, num_warps, meta)", body, scope)


def make_bound_launch(
    launcher: TritonLauncher,
    grid: tuple,
    args: tuple,
    varying: tuple[int, ...],
    nw: int | None,
    meta: dict,
    detection: Any | None,
    fallback: Callable[..., None],
    trusted: bool = False,
    home: int | None = None,
) -> Callable[..., Any] | None:
    """Launch code with everything fixed but the tensors at positions `varying`
    of `args`, which it takes as its parameters, in order.

    `grid` is a tuple, `nw` native warps, `meta` the constexprs and options by
    name (the caller checked that they bind every parameter after `args`; the
    first launch goes through Triton, which compiles and checks them). Calls
    the code does not serve go to `fallback(*tensors)`: the device layer
    detected anew (`detection.detection_count` changed since now; None: the
    caller named the device, which no detection changes), a pre-run hook,
    not a tensor where one was, a changed global. Tensors among the
    fixed arguments are held by the code (a placeholder the caller owns);
    None if one is not on the GPU. `trusted`: the caller vouches that every
    call's tensors are on the GPU with the dtypes of the first call, so the
    key is only the device and the tensors' alignment; with `home`, the index
    of the GPU they are on (portagpu.kernels: the plan's device), a call
    while another GPU is current runs under `home` (see _launch_lines).
    Untrusted code reads each tensor's GPU instead."""
    names = launcher.names
    home = home if trusted and launcher.switch is not None else None
    full = list(args) + [
        meta[name] if name in meta else default
        for name, default in zip(names[len(args) :], launcher.defaults[len(args) :], strict=True)
    ]
    scope = _scope(launcher, tuple(names[i] for i in varying))
    p = [f"p{i}" for i in range(len(names))]
    params = ", ".join(p[i] for i in varying)
    size = len(grid)
    scope.update({p[i]: value for i, value in enumerate(full) if i not in varying})
    # a tensor the caller fixes (a placeholder it owns) is passed as its address
    fixed_tensors = tuple(
        i
        for i, value in enumerate(full)
        if i not in varying and isinstance(value, launcher.tensor_type)
    )
    for i in fixed_tensors:
        if not full[i].is_cuda:
            return None
        scope[f"a{i}"] = full[i].data_ptr()
    scope.update(
        {
            "dm": detection,
            "READY": None if detection is None else detection.detection_count,
            "fallback": fallback,
            "GRID": grid,
            "NW": nw,
            "META": meta,
            "g0": grid[0],
            "g1": grid[1] if size > 1 else 1,
            "g2": grid[2] if size > 2 else 1,
        }
    )
    refuse = f"return fallback({params})"
    values = [scope[f"a{i}"] if i in fixed_tensors else value for i, value in enumerate(full)]
    driver = _driver_scope(launcher, scope, values, tuple(varying), grid)
    addresses = ", ".join(f"a{i}" for i in varying)
    body = [
        "if kernel.pre_run_hooks:"
        if detection is None
        else "if dm.detection_count != READY or kernel.pre_run_hooks:",
        f"    {refuse}",
        current_device_line(launcher, home),
        *_launch_lines(
            launcher,
            p,
            list(varying),
            key_head="(TAG, dev, ",
            grid=[],
            grid_name="GRID",
            native_args=f"GRID, ({', '.join(p[: len(args)])},), NW, None, META",
            refuse=refuse,
            fixed_tensors=fixed_tensors,
            trusted=trusted,
            home=home is not None,
            driver_call=f"drive(prepared, get_stream(dev), {addresses})" if driver else None,
        ),
    ]
    function = _compile(launcher, f"bound_launch({params})", body, scope)
    if home is not None:
        scope.update(
            {"HOME": home, "away": functools.partial(run_on, launcher.switch, home, function)}
        )
    return function


def _driver_scope(
    launcher: TritonLauncher,
    scope: dict,
    values: list,
    passed: tuple[int, ...],
    grid: tuple = (1, 1, 1),
) -> bool:
    """Give launch code `drive`, `drive_grid` and `driver_for` (see
    _launch_lines and driver_launch.prepared: `values` the fixed arguments,
    tensors as addresses; `passed` the positions the code gives per call)
    where the backend names its driver and driver_launch.c could be built;
    False where launches keep Triton's launcher."""
    from portagpu.runtime import driver_launch

    names = getattr(launcher.backend, "driver_launch_names", None)
    if names is None or not driver_launch.enabled():
        return False
    driver = driver_launch.driver(names)
    if driver is None:
        return False
    made: dict[Any, Any] = {}  # compiled kernel -> its prepared driver launch (or None)

    def driver_for(entry: tuple) -> Any:
        compiled = entry[3]
        prepared = made.get(compiled, _MISSING)
        if prepared is _MISSING:
            prepared = made[compiled] = driver_launch.prepared(driver, entry, values, passed, grid)
        return prepared

    scope.update({"drive": driver.launch, "drive_grid": driver.launch_grid, "driver_for": driver_for})
    return True
