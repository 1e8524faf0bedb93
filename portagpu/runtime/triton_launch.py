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
from portagpu.runtime.placement import elsewhere, run_on
from portagpu.runtime.triton_codegen import _never, globals_changed, hooks_idle, make_fast_launch
from portagpu.runtime.triton_direct import direct_launch

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
        self.switch = None
        self.one_gpu = False
        self.name = getattr(self.base, "__name__", "kernel")
        self.arg_names = tuple(getattr(self.base, "arg_names", ()))
        self.interpreted_kernel = None  # made on the first interpreted launch
        # a function computing what the kernel computes (portagpu.reference_for):
        # it runs instead of Triton's interpreter, and where Triton cannot run
        self.reference: Callable[..., Any] | None = None
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
        self.mode = backend.triton_mode
        self.interpreted = backend.triton_mode == "interpreted"
        self.fast = bool(backend.triton_fast_path) and self.is_plain_jit
        # GPUs picked by index: a launch runs on its tensors' GPU (placement.py)
        self.switch = backend.device_switch_hooks() if self.mode == "native" else None
        self.shapes: dict[int, Callable[..., bool]] = {}  # made for this device's facts
        self.warps: dict[int, int | None] = {}
        if self.fast:
            import torch
            from triton import knobs

            self.knobs = knobs.runtime
            self.tensor_type = torch.Tensor
            self.current_device, self.current_stream = backend.triton_fast_path_hooks()
        # one GPU: it is always the current one, so generated code does not ask (~0.1 us)
        self.one_gpu = self.fast and backend.torch_gpu_count() == 1
        self.device = device

    def __call__(self, device: Any, grid: Any, args: tuple, num_warps: int | None,
                 stream: Any, meta: dict, try_fast: bool = True, interpret: bool | None = None) -> None:
        if device is not self.device:
            self._configure(device)
        if self.mode != "native":
            if self.reference is not None and not (interpret and self.interpreted):
                self._run_reference(args, meta)
                return
            if self.mode == "none":
                raise LaunchError(
                    f"Triton kernels cannot run on {self.backend.display_name} ({device.name}); "
                    "give the kernel a reference with portagpu.reference_for(kernel, fn) to run it here")
        if self.fast and stream is None and try_fast:
            # the generated code launches only tensors on the current GPU
            if self.fast_function(args, meta, grid)(grid, args, num_warps, meta):
                return
        if self.switch is not None:
            index = self.elsewhere(args)
            if index is not None and stream is None:  # a stream= names its device itself
                run_on(self.switch, index, self, device, grid, args, num_warps, None, meta, True, interpret)
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

    def elsewhere(self, args: tuple) -> int | None:
        """The GPU the tensors among the positional arguments are on when it
        is not the current one (placement.elsewhere: LaunchError when they are
        on two GPUs)."""
        return elsewhere(self.switch[0], args, self.arg_names, self.backend.torch_device, self.name)

    # -- Triton's own dispatch --------------------------------------------------
    def _native(self, grid: Any, args: tuple, nw: int | None, stream: Any, meta: dict) -> Any:
        if nw is not None:
            meta = {**meta, "num_warps": nw}
        if stream is None:
            return self.kernel[grid](*args, **meta)
        with self.backend.torch_stream(stream):
            return self.kernel[grid](*args, **meta)

    # -- the user's reference ---------------------------------------------------
    def _run_reference(self, args: tuple, meta: dict) -> None:
        """The reference gets the kernel's arguments: those given positionally,
        and the kernel parameters given by keyword (constexprs); not the grid,
        num_warps or other launch options."""
        names = getattr(self.base, "arg_names", None)
        params = meta if names is None else {k: v for k, v in meta.items() if k in names}
        self.reference(*args, **params)

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
    def fast_function(self, args: tuple, meta: dict, grid: Any = None) -> Callable[..., bool]:
        """The generated launch function for calls shaped like this one (made on
        the first call with this many positional arguments; see make_fast_launch)."""
        made = self.shapes.get(len(args))
        if made is None:
            plan = self._plan(len(args), tuple(meta))
            if plan is not None and self.foreign.isdisjoint(meta):
                made = make_fast_launch(self, len(args), plan, args, meta, grid)
            self.shapes[len(args)] = made = made or _never
        return made

    def _plan(self, nargs: int, keys: tuple[str, ...]) -> tuple | None:
        """How to complete the positional arguments from `meta` and defaults.

        Returns (fill, option names, constexpr flags) where fill lists, for each
        parameter after the positional ones, (True, meta key) or (False, default);
        None when the call cannot be bound (Triton's own dispatch will say why).
        A parameter given by keyword, constexpr or not, is read from `meta` into
        its position (real code passes tensors, strides and sizes by keyword:
        Liger-Kernel's cross-entropy and KL kernels)."""
        names = self.names
        if nargs > len(names):
            return None
        fill = []
        for name, default in zip(names[nargs:], self.defaults[nargs:], strict=True):
            if name in keys:
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
        run, function, packed_metadata, compiled, used_globals = entry[:5]
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
            run = compiled.run
            entry = (run, compiled.function, compiled.packed_metadata, compiled,
                     self.kernel.used_global_vals, *(direct_launch(run) or (None, None, None)))
        except Exception:  # a Triton whose CompiledKernel differs: keep its dispatch
            self.fast = False
            return
        self.cache[key] = entry
