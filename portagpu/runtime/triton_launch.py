"""Launching @triton.jit kernels on the detected device.

- `num_warps` is given in 32-thread units and scaled to the device's warp
  (wavefront) size so a block keeps its thread count, clamped to 1,024 threads.
- Triton options that only another vendor's compiler understands are dropped
  (each backend lists its own in `triton_options`).
- On a device with no Triton GPU backend the kernel runs in Triton's CPU
  interpreter: bf16 tensors go through float32 copies (the interpreter gets
  bf16 arithmetic wrong) and a multi-config `@triton.autotune` uses one config
  chosen without timing (the largest tiles: fewest programs, which is what the
  interpreter is fast at).
- Fast path (backends with `triton_fast_path`): after the first launch of a
  specialisation through Triton's own `kernel[grid](...)`, the compiled kernel
  and its launcher are cached under a key that is at least as fine as Triton's
  specialisation, and later launches call the launcher directly.
"""

from __future__ import annotations

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


def _torch_stream(stream: Any) -> Any:
    import torch

    if isinstance(stream, torch.cuda.Stream):
        return stream
    ptr = stream if isinstance(stream, int) else getattr(stream, "ptr", None)
    if ptr is None:
        raise LaunchError(f"stream must be a torch/CuPy stream or a raw pointer, got {stream!r}")
    return torch.cuda.ExternalStream(ptr)


class TritonLauncher:
    """Launches one Triton kernel; holds its fast-path cache."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.base = _base_function(kernel)
        self.device = None
        self.cache: dict[tuple, tuple] = {}
        self.plans: dict[tuple, tuple | None] = {}
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
        self.interpreted = backend.triton_interpreted
        self.fast = bool(backend.triton_fast_path) and self.is_plain_jit
        if self.fast:
            import torch
            from triton import knobs

            self.knobs = knobs.runtime
            self.tensor_type = torch.Tensor
            self.current_device = torch._C._cuda_getDevice  # CUDA is initialised by then
            self.current_stream = torch._C._cuda_getCurrentRawStream
        self.device = device

    def __call__(self, device: Any, grid: Any, args: tuple, num_warps: int | None,
                 stream: Any, meta: dict) -> None:
        if device is not self.device:
            self._configure(device)
        nw = None if num_warps is None else native_num_warps(num_warps, self.warp_size)
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
        import torch

        with torch.cuda.stream(_torch_stream(stream)):
            return self.kernel[grid](*args, **meta)

    # -- CPU interpreter --------------------------------------------------------
    def _interpret(self, grid: Any, args: tuple, nw: int | None, meta: dict) -> None:
        if type(self.base).__name__ == "JITFunction":
            raise LaunchError(
                f"Triton kernel {getattr(self.base, '__name__', self.base)!r} was compiled for a GPU, "
                "but this device has none: it was decorated before TRITON_INTERPRET=1 took effect. "
                "Import portagpu before the module that defines the kernel, or set TRITON_INTERPRET=1"
            )
        kernel = self.kernel
        if nw is not None:
            meta = {**meta, "num_warps": nw}
        if self.configs is not None and len(self.configs) > 1:
            config = _pick_config(self.configs)
            meta = {**meta, **config.all_kwargs()}
            if config.pre_hook is not None:
                config.pre_hook({**dict(zip(kernel.arg_names, args, strict=False)), **meta})
            kernel = kernel.fn
        widened = _Bf16ThroughFloat32(args, meta)
        kernel[grid](*widened.args, **widened.meta)
        widened.copy_back()

    # -- fast path --------------------------------------------------------------
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
        options = tuple(sorted(k for k in keys if k not in names))
        return tuple(fill), options, self.constexpr

    def _fast(self, grid: Any, args: tuple, nw: int | None, meta: dict) -> None:
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
        # and 16-byte alignment, int range / ==1 / divisibility by 16, and the
        # value of every constexpr (plus num_warps and the other options).
        tensor = self.tensor_type
        parts: list[Any] = [nw, *[meta[k] for k in option_names]] if option_names else [nw]
        append = parts.append
        for value, is_constexpr in zip(full, constexpr, strict=False):
            if is_constexpr:
                append(value)
                continue
            kind = type(value)
            if kind is tensor or isinstance(value, tensor):
                append(value.dtype)
                append(value.data_ptr() & 15 == 0)
                append(value.is_cuda)  # a CPU tensor never reuses a GPU entry
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
        if used_globals:
            for (name, _), (value, scope) in used_globals.items():
                if scope.get(name, _MISSING) != value:
                    self._native(grid, args, nw, None, meta)  # let Triton raise its error
                    return
        if callable(grid):
            grid = grid(dict(zip(self.names, full, strict=False)))
        size = len(grid)
        stream = self.current_stream(device_index)
        enter, leave = self.knobs.launch_enter_hook, self.knobs.launch_exit_hook
        if (enter is None or not getattr(enter, "calls", True)) and (
            leave is None or not getattr(leave, "calls", True)
        ):
            run(grid[0], grid[1] if size > 1 else 1, grid[2] if size > 2 else 1, stream, function,
                packed_metadata, None, None, None, *full)
        else:
            metadata = compiled.launch_metadata(grid, stream, *full)
            run(grid[0], grid[1] if size > 1 else 1, grid[2] if size > 2 else 1, stream, function,
                packed_metadata, metadata, enter, leave, *full)

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
