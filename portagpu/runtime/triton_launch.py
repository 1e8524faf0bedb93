"""Launching @triton.jit kernels on the detected device.

- `num_warps` is given in 32-thread units and scaled to the device's warp
  (wavefront) size so a block keeps its thread count, clamped to 1,024 threads.
- Triton options that only another vendor's compiler understands are dropped
  (each backend lists its own in `triton_options`).
- Each backend says how Triton runs on it (`triton_mode`): natively, or in
  Triton's CPU interpreter where it has no Triton GPU backend (CPU, MPS). The
  interpreter is chosen per kernel at launch (runtime/triton_interpreter.py),
  with no environment variable, so it does not matter whether the kernel was
  decorated before or after portagpu was imported. There bf16 tensors go
  through float32 copies (the interpreter gets bf16 arithmetic wrong) and a
  multi-config `@triton.autotune` uses one config chosen without timing (the
  largest tiles: fewest programs, which is what the interpreter is fast at).
- Fast path (backends with `triton_fast_path`): after the first launch of a
  specialisation through Triton's own `kernel[grid](...)`, the compiled kernel
  and its launcher are cached under a key that is at least as fine as Triton's
  specialisation, and later launches call the launcher directly.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from portagpu.errors import LaunchError

WARP_UNIT = 32  # num_warps is counted in 32-thread warps by the caller
MAX_BLOCK_THREADS = 1024  # Triton raises OutOfResources above this

_I32_MIN, _I32_MAX, _U64_MIN = -(2**31), 2**31 - 1, 2**63
_MISSING = object()


def native_num_warps(num_warps: int | None, warp_size: int | None) -> int | None:
    """`num_warps` in 32-thread units -> warps of `warp_size` threads, same thread
    count, clamped so a block has at most 1,024 threads. None stays None
    (Triton's default); an unknown warp size (CPU) leaves the value unchanged."""
    if num_warps is None:
        return None
    if isinstance(num_warps, bool) or not isinstance(num_warps, int) or num_warps < 1:
        raise LaunchError(f"num_warps must be a positive int, got {num_warps!r}")
    if not warp_size:
        return num_warps
    threads = num_warps * WARP_UNIT
    return max(1, min(threads // warp_size, MAX_BLOCK_THREADS // warp_size))


@cache
def foreign_triton_options(backend_name: str) -> frozenset[str]:
    """Triton options of other vendors, to drop before launching on `backend_name`."""
    from portagpu.backends import all_backends, get_backend

    every = frozenset().union(*(b.triton_options for b in all_backends()))
    return every - get_backend(backend_name).triton_options


def is_triton_kernel(kernel: Any) -> bool:
    module = type(kernel).__module__ or ""
    return module.startswith("triton.") and hasattr(kernel, "run") and hasattr(kernel, "__getitem__")


def _base_function(kernel: Any) -> Any:
    """The JITFunction / InterpretedFunction under autotune/heuristics wrappers."""
    seen = 0
    while type(kernel).__name__ not in ("JITFunction", "InterpretedFunction") and seen < 16:
        inner = getattr(kernel, "fn", None)
        if inner is None:
            break
        kernel, seen = inner, seen + 1
    return kernel


def _pick_config(configs: list) -> Any:
    """Without a timer: the config with the largest tiles (fewest programs)."""

    def tile_volume(config: Any) -> int:
        volume = 1
        for value in config.kwargs.values():
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                volume *= value
        return volume

    return max(configs, key=tile_volume)


class _Bf16ThroughFloat32:
    """Swap bf16 tensor arguments for float32 copies; copy results back."""

    def __init__(self, args: tuple, meta: dict) -> None:
        import torch

        self.pairs: list[tuple[Any, Any]] = []

        def widen(value: Any) -> Any:
            if isinstance(value, torch.Tensor) and value.dtype == torch.bfloat16:
                wide = value.float()
                self.pairs.append((value, wide))
                return wide
            return value

        self.args = tuple(widen(a) for a in args)
        self.meta = {k: widen(v) for k, v in meta.items()}

    def copy_back(self) -> None:
        for original, wide in self.pairs:
            original.copy_(wide)


class TritonLauncher:
    """Launches one Triton kernel; holds its fast-path cache."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.base = _base_function(kernel)
        self.device = None
        self.interpreted_kernel = None  # made on the first interpreted launch
        self.ready = -1  # detection count for which dispatch may call `shapes` directly
        self.cache: dict[tuple, tuple] = {}
        self.plans: dict[tuple, tuple | None] = {}
        self.shapes: dict[int, Callable[..., bool]] = {}
        self.is_plain_jit = type(kernel).__name__ == "JITFunction"
        self.configs = getattr(kernel, "configs", None)
        if self.is_plain_jit:
            params = kernel.params
            self.names = tuple(p.name for p in params)
            self.constexpr = tuple(bool(p.is_constexpr) for p in params)
            self.defaults = tuple(p.default if p.has_default else _MISSING for p in params)

    # -- per-device configuration ---------------------------------------------
    def _configure(self, device: Any) -> None:
        from portagpu.backends import backend_for

        backend = backend_for(device)
        self.backend = backend
        self.warp_size = device.warp_size
        self.foreign = foreign_triton_options(backend.name)
        if backend.triton_mode == "none":
            raise LaunchError(f"Triton kernels cannot run on {backend.display_name} ({device.name})")
        self.interpreted = backend.triton_mode == "interpreted"
        self.fast = bool(backend.triton_fast_path) and self.is_plain_jit
        self.shapes: dict[int, Callable[..., bool]] = {}  # made for this device's facts
        self.warps: dict[int, int | None] = {}
        if self.fast:
            import torch
            from triton import knobs

            self.knobs = knobs.runtime
            enter = knobs.runtime.launch_enter_hook
            self.hook_chain = type(enter) if hasattr(enter, "calls") else _NoHookChain
            self.tensor_type = torch.Tensor
            self.current_device, self.current_stream = backend.triton_fast_path_hooks()
        self.device = device

    def __call__(self, device: Any, grid: Any, args: tuple, num_warps: int | None,
                 stream: Any, meta: dict, try_fast: bool = True) -> None:
        if device is not self.device:
            self._configure(device)
        if self.fast and stream is None and try_fast:
            if self.fast_function(args, meta)(grid, args, num_warps, meta):
                return
        nw = None if num_warps is None else self.scale_warps(num_warps)
        if meta and self.foreign and not self.foreign.isdisjoint(meta):
            meta = {k: v for k, v in meta.items() if k not in self.foreign}
        if self.interpreted:
            self._interpret(grid, args, nw, meta)
        elif self.fast and stream is None and not self.kernel.pre_run_hooks:
            self._fast(grid, args, nw, meta)
        else:
            self._native(grid, args, nw, stream, meta)

    # -- Triton's own dispatch --------------------------------------------------
    def _native(self, grid: Any, args: tuple, nw: int | None, stream: Any, meta: dict) -> Any:
        if nw is not None:
            meta = {**meta, "num_warps": nw}
        if stream is None:
            return self.kernel[grid](*args, **meta)
        with self.backend.torch_stream(stream):
            return self.kernel[grid](*args, **meta)

    # -- CPU interpreter --------------------------------------------------------
    def _interpret(self, grid: Any, args: tuple, nw: int | None, meta: dict) -> None:
        from portagpu.runtime.triton_interpreter import interpreted, interpreting

        kernel = self.interpreted_kernel
        if kernel is None:
            kernel = self.interpreted_kernel = interpreted(self.kernel)
        if nw is not None:
            meta = {**meta, "num_warps": nw}
        if self.configs is not None and len(self.configs) > 1:
            config = _pick_config(self.configs)
            meta = {**meta, **config.all_kwargs()}
            if config.pre_hook is not None:
                config.pre_hook({**dict(zip(kernel.arg_names, args, strict=False)), **meta})
            kernel = kernel.fn
        widened = _Bf16ThroughFloat32(args, meta)
        with interpreting():
            kernel[grid](*widened.args, **widened.meta)
        widened.copy_back()

    # -- fast path --------------------------------------------------------------
    def fast_function(self, args: tuple, meta: dict) -> Callable[..., bool]:
        """The generated launch function for calls shaped like this one (made on
        the first call with this many positional arguments; see make_fast_launch)."""
        made = self.shapes.get(len(args))
        if made is None:
            plan = self._plan(len(args), tuple(meta))
            if plan is not None and self.foreign.isdisjoint(meta):
                made = make_fast_launch(self, len(args), plan, args, meta)
            self.shapes[len(args)] = made = made or _never
        return made

    def _plan(self, nargs: int, keys: tuple[str, ...]) -> tuple | None:
        """How to complete the positional arguments from `meta` and defaults.

        Returns (fill, option names, constexpr flags) where fill lists, for each
        parameter after the positional ones, (True, meta key) or (False, default);
        None when the call cannot be bound (Triton's own dispatch will say why)
        or passes a non-constexpr parameter by keyword (rare: not cached)."""
        names = self.names
        if nargs > len(names):
            return None
        fill = []
        for name, default, is_constexpr in zip(names[nargs:], self.defaults[nargs:],
                                               self.constexpr[nargs:], strict=True):
            if name in keys:
                if not is_constexpr:
                    return None
                fill.append((True, name))
            elif default is _MISSING:
                return None
            else:
                fill.append((False, default))
        options = tuple(sorted(k for k in keys if k not in names and k not in self.foreign))
        return tuple(fill), options, self.constexpr

    def _fast(self, grid: Any, args: tuple, nw: int | None, meta: dict) -> None:
        """Any call shape and argument types (the generated functions take the
        common ones): the same key, built by a loop."""
        plan_key = (len(args), *meta)
        plan = self.plans.get(plan_key, _MISSING)
        if plan is _MISSING:
            plan = self.plans[plan_key] = self._plan(len(args), tuple(meta))
        if plan is None:
            self._native(grid, args, nw, None, meta)
            return
        fill, option_names, constexpr = plan
        full = args + tuple([meta[x] if from_meta else x for from_meta, x in fill]) if fill else args
        # The key is at least as fine as Triton's specialisation: tensor dtype
        # and 16-byte alignment, int range / ==1 / divisibility by 16, the value
        # and type of every constexpr (plus num_warps and the other options).
        tensor = self.tensor_type
        parts: list[Any] = [nw, *[meta[k] for k in option_names]] if option_names else [nw]
        append = parts.append
        for value, is_constexpr in zip(full, constexpr, strict=False):
            kind = type(value)
            if is_constexpr:
                append(value)
                append(kind)  # 1, 1.0 and True are equal keys but different kernels
                continue
            if kind is tensor or isinstance(value, tensor):
                append(value.dtype)
                append(value.data_ptr() & 15 == 0)
            elif kind is int:
                append(0 if value == 1 else 1 if value & 15 == 0 else 2)
                append(0 if _I32_MIN <= value <= _I32_MAX else 1 if value >= _U64_MIN else 2)
            elif kind is float or kind is bool or value is None:
                append(kind)
            else:  # tuples, descriptors, foreign arrays: Triton's own dispatch
                self._native(grid, args, nw, None, meta)
                return
        device_index = self.current_device()
        key = (device_index, *parts)
        try:
            entry = self.cache.get(key)
        except TypeError:  # an unhashable constexpr value
            self._native(grid, args, nw, None, meta)
            return
        if entry is None:
            self._remember(key, self._native(grid, args, nw, None, meta))
            return
        run, function, packed_metadata, compiled, used_globals = entry
        if used_globals and globals_changed(used_globals):
            self._native(grid, args, nw, None, meta)  # let Triton raise its error
            return
        if callable(grid):
            grid = grid(dict(zip(self.names, full, strict=False)))
        size = len(grid)
        stream = self.current_stream(device_index)
        enter, leave = self.knobs.launch_enter_hook, self.knobs.launch_exit_hook
        if hooks_idle(enter) and hooks_idle(leave):
            run(grid[0], grid[1] if size > 1 else 1, grid[2] if size > 2 else 1, stream, function,
                packed_metadata, None, None, None, *full)
        else:
            metadata = compiled.launch_metadata(grid, stream, *full)
            run(grid[0], grid[1] if size > 1 else 1, grid[2] if size > 2 else 1, stream, function,
                packed_metadata, metadata, enter, leave, *full)

    def scale_warps(self, num_warps: Any) -> int | None:
        """native_num_warps for this device, remembered per int value."""
        nw = native_num_warps(num_warps, self.warp_size)
        if type(num_warps) is int and len(self.warps) < 64:
            self.warps[num_warps] = nw
        return nw

    def _remember(self, key: tuple, compiled: Any) -> None:
        """Cache the compiled kernel's launcher, if this Triton exposes one we know."""
        if compiled is None or hasattr(compiled, "result"):  # warmup-only or async future
            return
        try:
            entry = (compiled.run, compiled.function, compiled.packed_metadata, compiled,
                     self.kernel.used_global_vals)
        except Exception:  # a Triton whose CompiledKernel differs: keep its dispatch
            self.fast = False
            return
        self.cache[key] = entry


# --- generated fast launches -------------------------------------------------------
class _NoHookChain:
    """Stands for Triton's HookChain in Tritons whose launch hooks are plain callables."""

    calls = ()


def hooks_idle(hook: Any) -> bool:
    """No launch hook to run: None (older Triton) or an empty HookChain."""
    return hook is None or not getattr(hook, "calls", True)


def globals_changed(used_globals: dict) -> bool:
    """A global the kernel read at compile time has another value now."""
    for (name, _), (value, scope) in used_globals.items():
        if scope.get(name, _MISSING) != value:
            return True
    return False


def _never(grid: Any, args: tuple, num_warps: Any, meta: dict) -> bool:
    return False


# One key element per int, as fine as Triton's specialisation: -1 for the
# value 1; otherwise the range (i32 0, i64 2, u64 4) plus 1 when divisible by
# 16 (True/False for i32, the common case, is cheapest to compute).
_INT_SPEC = ("-1 if {v} == 1 else {v} & 15 == 0 if -2147483648 <= {v} <= 2147483647 "
             "else 2 + ({v} & 15 == 0) + 2 * ({v} >= 9223372036854775808)")


def make_fast_launch(launcher: TritonLauncher, nargs: int, plan: tuple, args: tuple,
                     meta: dict) -> Callable[..., bool] | None:
    """Straight-line launch code for one call shape and argument-type pattern.

    The shape is the positional count and the `meta` keys; the pattern is the
    exact type of each non-constexpr argument in this call. The function
    returns False, having done nothing, for a call it was not made for (other
    keys or types, a pre-run hook, a changed global, an unhashable constexpr):
    the caller then takes the general path. It builds the same key as
    `TritonLauncher._fast`, prefixed with its own tag, and launches exactly as
    `JITFunction.run` does. None when the pattern has a type it cannot key."""
    fill, option_names, constexpr = plan
    names = launcher.names
    tensor = launcher.tensor_type
    values = list(args) + [meta[x] if from_meta else x for from_meta, x in fill]
    scope: dict[str, Any] = {
        "kernel": launcher.kernel, "cache_get": launcher.cache.get, "remember": launcher._remember,
        "native": launcher._native, "warps_get": launcher.warps.get, "scale_warps": launcher.scale_warps,
        "get_device": launcher.current_device, "get_stream": launcher.current_stream,
        "rt": launcher.knobs, "Chain": launcher.hook_chain, "globals_changed": globals_changed,
        "TAG": object(),
    }
    p = [f"p{i}" for i in range(len(names))]
    body = [f"if kernel.pre_run_hooks or len(meta) != {len(meta)}:", "    return False"]
    if nargs:
        body.append(f"{', '.join(p[:nargs])}, = args")
    body.append("try:")
    body += [f"    {p[nargs + i]} = meta[{x!r}]" for i, (from_meta, x) in enumerate(fill) if from_meta]
    body += [f"    o{i} = meta[{k!r}]" for i, k in enumerate(option_names)]
    body += ["    pass", "except KeyError:", "    return False"]
    for i, (from_meta, x) in enumerate(fill):
        if not from_meta:
            scope[f"d{nargs + i}"] = x
            body.append(f"{p[nargs + i]} = d{nargs + i}")
    guards, key = [], ["TAG", "dev", "nw", *[f"o{i}" for i in range(len(option_names))]]
    for i, (value, is_constexpr) in enumerate(zip(values, constexpr, strict=True)):
        if is_constexpr:
            key += [p[i], f"type({p[i]})"]
            continue
        kind = type(value)
        if isinstance(value, tensor):
            # No type guard: like Triton, anything with .dtype and .data_ptr()
            # is keyed as a tensor; anything else raises AttributeError below.
            key += [f"{p[i]}.dtype", f"{p[i]}.data_ptr() & 15 == 0"]
        elif kind is int:
            guards.append(f"type({p[i]}) is int")
            key.append(_INT_SPEC.format(v=p[i]))
        elif kind in (float, bool):
            guards.append(f"type({p[i]}) is {kind.__name__}")
            key.append(kind.__name__)
        elif value is None:
            guards.append(f"{p[i]} is None")
            key.append("None")
        else:
            return None
    if guards:
        body += [f"if not ({' and '.join(guards)}):", "    return False"]
    params = ", ".join(p)
    # No launch hook installed (a profiler adds them): pass None, as Triton's
    # launcher does nothing with an empty chain. Triton with HookChain knobs:
    # empty chains; older Triton: None. Anything else takes the hooked launch.
    idle = ("type(enter) is Chain and type(leave) is Chain and not enter.calls and not leave.calls"
            if launcher.hook_chain is not _NoHookChain else "enter is None and leave is None")
    grid_dict = "{" + ", ".join(f"{name!r}: {p[i]}" for i, name in enumerate(names)) + "}"
    launch_grid = "grid[0], grid[1] if size > 1 else 1, grid[2] if size > 2 else 1, stream, function, packed"
    body += [
        "if num_warps is None:",
        "    nw = None",
        "else:",
        "    nw = warps_get(num_warps) if type(num_warps) is int else None",
        "    if nw is None:",
        "        nw = scale_warps(num_warps)",
        "dev = get_device()",
        "try:",
        f"    key = ({', '.join(key)},)",
        "    entry = cache_get(key)",
        "except (AttributeError, TypeError):  # not a tensor where one was; unhashable constexpr",
        "    return False",
        "if entry is None:",
        "    remember(key, native(grid, args, nw, None, meta))",
        "    return True",
        "run, function, packed, compiled, used_globals = entry",
        "if used_globals and globals_changed(used_globals):",
        "    return False",
        "if type(grid) is not tuple and callable(grid):",
        f"    grid = grid({grid_dict})",
        "size = len(grid)",
        "stream = get_stream(dev)",
        "enter = rt.launch_enter_hook",
        "leave = rt.launch_exit_hook",
        f"if {idle}:",
        f"    run({launch_grid}, None, None, None, {params})",
        "else:",
        f"    run({launch_grid}, compiled.launch_metadata(grid, stream, {params}), enter, leave, {params})",
        "return True",
    ]
    source = "def fast_launch(grid, args, num_warps, meta):\n" + "".join(f"    {line}\n" for line in body)
    exec(compile(source, f"<portagpu fast launch of {getattr(launcher.base, '__name__', '?')}>", "exec"), scope)
    function = scope["fast_launch"]
    function.source = source  # for debugging: print(launcher.shapes[n].source)
    return function
