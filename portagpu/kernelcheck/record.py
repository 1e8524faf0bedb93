"""Record every distinct kernel specialisation a process launches.

While a Recorder is started, these entry points are wrapped (and restored by
`stop()`):

- `triton.runtime.jit.JITFunction.run`: every `kernel[grid](...)` on a GPU;
- `triton.runtime.interpreter.InterpretedFunction.run`: the same under
  TRITON_INTERPRET=1 (Triton's launch hooks never fire there);
- `triton.runtime.autotuner.Autotuner.run`: an autotuned launch, recorded once
  per config, since any of them may be the one that runs;
- `portagpu.runtime.triton_launch.TritonLauncher.__call__` and `._native`:
  `portagpu.launch`, whose num_warps counts 32-thread units and whose vendor
  options are filtered per device (recorded as such, so each target gets what
  portagpu would launch there);
- `portagpu.runtime.cuda_source.CudaKernel._launch`: CUDA C source launches.

Recording never changes what the launch does and never raises into it: a
launch that cannot be recorded is noted. Each new launch shape costs one call
of Triton's binder; a repeated one a dictionary look-up.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from portagpu.errors import PortagpuError
from portagpu.kernelcheck.cuda_check import CudaSpec
from portagpu.kernelcheck.spec import SpecSet, specs_of_call


@cache
def _library_dirs() -> tuple[str, ...]:
    """Folders whose frames are not the user's launch site: Triton's and portagpu's."""
    import importlib.util

    dirs = []
    for name in ("triton", "portagpu", "portagpu.kernels", "portagpu.hipify_bridge"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            dirs += [os.path.join(os.path.abspath(p), "") for p in spec.submodule_search_locations]
    return tuple(dirs)


def _arg_key(value: Any) -> Any:
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        try:
            return ("T", str(value.dtype), value.data_ptr() & 15 == 0)
        except Exception:  # noqa: BLE001 - a tensor-like that cannot say
            return ("T", str(value.dtype))
    try:
        hash(value)
    except TypeError:
        return ("R", type(value).__name__, repr(value)[:80])
    return (type(value).__name__, value)


class Recorder:
    """Collects KernelSpecs (Triton) and CudaSpecs (CUDA C) from launches."""

    def __init__(self) -> None:
        self.specs = SpecSet()
        self.cuda_specs: dict[str, CudaSpec] = {}
        self.problems: list[str] = []
        self.origin = ""  # set by the pytest plugin to the running test's id
        self.seconds = 0.0  # spent recording: what the check adds to each launch
        self.active = False
        self._seen: set[Any] = set()
        self._patches: list[tuple[type, str, Any]] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------
    # Recorders nest (a pytest session inside a pytest session, a `with Recorder()` in a
    # test run with --portagpu-compile-for): launches belong to the innermost one only.
    _stack: list[Recorder] = []

    def start(self) -> Recorder:
        if self.active:
            return self
        self._wrap_triton()
        self._wrap_portagpu()
        self.active = True
        Recorder._stack.append(self)
        return self

    def stop(self) -> None:
        for cls, name, original in reversed(self._patches):
            setattr(cls, name, original)
        self._patches.clear()
        self.active = False
        if self in Recorder._stack:
            Recorder._stack.remove(self)

    @property
    def listening(self) -> bool:
        """Recording now: started, and no recorder started after it is running."""
        return self.active and Recorder._stack[-1:] == [self]

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _patch(self, cls: type, name: str, make: Callable[[Any], Any]) -> None:
        original = cls.__dict__[name]
        setattr(cls, name, make(original))
        self._patches.append((cls, name, original))

    # -- busy flag: a launch inside one already recorded (autotune benchmarking, ...) --
    def _busy(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    def _enter(self) -> None:
        self._local.depth = getattr(self._local, "depth", 0) + 1

    def _leave(self) -> None:
        self._local.depth -= 1

    # -- recording --------------------------------------------------------------------
    def forget(self, keys: list[str]) -> None:
        """Drop specs recorded for a launch that portagpu then refused (bad arguments)."""
        with self._lock:
            for key in keys:
                self.specs.specs.pop(key, None)

    def record(
        self, kernel: Any, args: tuple, kwargs: dict[str, Any], *, warp_units: bool
    ) -> list[str]:
        """Identities of the specs this launch added (none when it was seen before)."""
        start = time.perf_counter()
        try:
            return self._record(kernel, args, kwargs, warp_units)
        finally:
            self.seconds += time.perf_counter() - start

    def _record(
        self, kernel: Any, args: tuple, kwargs: dict[str, Any], warp_units: bool
    ) -> list[str]:
        try:
            key = (
                id(kernel),
                warp_units,
                tuple(_arg_key(a) for a in args),
                tuple(sorted((k, _arg_key(v)) for k, v in kwargs.items())),
            )
        except Exception:  # noqa: BLE001 - odd arguments: record without the quick key
            key = None
        if key is not None and key in self._seen:
            return []
        try:
            specs = specs_of_call(kernel, args, kwargs, warp_units=warp_units, origin=self._where())
        except Exception as exc:  # noqa: BLE001 - recording must never break the launch
            self._problem(
                f"could not record a launch of {getattr(kernel, '__name__', type(kernel).__name__)}: "
                f"{type(exc).__name__}: {exc}"
            )
            return []
        with self._lock:
            if key is not None:
                self._seen.add(key)
            return [spec.identity() for spec in specs if self.specs.add(spec)]

    def record_cuda(self, kernel: Any, block: Any, meta: dict[str, Any]) -> str | None:
        start = time.perf_counter()
        try:
            return self._record_cuda(kernel, block, meta)
        finally:
            self.seconds += time.perf_counter() - start

    def _record_cuda(self, kernel: Any, block: Any, meta: dict[str, Any]) -> str | None:
        try:
            from portagpu.runtime.cuda_source import DEFAULT_BLOCK

            dims = (
                tuple(block)
                if isinstance(block, (tuple, list))
                else (int(block),)
                if block
                else DEFAULT_BLOCK
            )
            dims = tuple(int(d) for d in (*dims, 1, 1)[:3])
            file, line = self._caller()
            spec = CudaSpec(
                name=kernel.name,
                source=kernel.source,
                options=tuple(kernel.options),
                block=dims,
                shared_mem=int(meta.get("shared_mem", 0) or 0),
                file=file,
                line=line,
                origin=self.origin,
            )
        except Exception as exc:  # noqa: BLE001
            self._problem(f"could not record a CUDA launch of {kernel!r}: {exc}")
            return None
        with self._lock:
            key = spec.identity()
            if key in self.cuda_specs:
                return None
            self.cuda_specs[key] = spec
            return key

    def _problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)

    def _where(self) -> str:
        if self.origin:
            return self.origin
        file, line = self._caller()
        return f"{file}:{line}"

    @staticmethod
    def _caller() -> tuple[str, int]:  # runs once per new launch shape
        """The first frame outside Triton and portagpu: where the user launched."""
        skip = _library_dirs()
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith(skip) and not name.startswith("<"):
                return name, frame.f_lineno
            frame = frame.f_back
        return "<unknown>", 1

    # -- the wrappers -----------------------------------------------------------------
    def _wrap_triton(self) -> None:
        recorder = self
        try:
            from triton.runtime.autotuner import Autotuner
            from triton.runtime.jit import JITFunction
        except ImportError:
            self.problems.append("triton is not importable: Triton launches were not recorded")
            return

        def plain(original: Any) -> Any:
            def run(kernel: Any, *args: Any, grid: Any, warmup: Any, **kwargs: Any) -> Any:
                if recorder.listening and not recorder._busy():
                    recorder.record(kernel, args, kwargs, warp_units=False)
                return original(kernel, *args, grid=grid, warmup=warmup, **kwargs)

            return run

        def autotuned(original: Any) -> Any:
            def run(kernel: Any, *args: Any, **kwargs: Any) -> Any:
                if not recorder.listening or recorder._busy():
                    return original(kernel, *args, **kwargs)
                recorder.record(kernel, args, kwargs, warp_units=False)
                recorder._enter()
                try:
                    return original(kernel, *args, **kwargs)
                finally:
                    recorder._leave()

            return run

        self._patch(JITFunction, "run", plain)
        self._patch(Autotuner, "run", autotuned)
        try:
            from triton.runtime.interpreter import InterpretedFunction
        except ImportError:
            return
        self._patch(InterpretedFunction, "run", plain)

    def _wrap_portagpu(self) -> None:
        recorder = self
        from portagpu.runtime.cuda_source import CudaKernel
        from portagpu.runtime.triton_launch import TritonLauncher

        def call(original: Any) -> Any:
            def launcher_call(
                launcher: Any,
                device: Any,
                grid: Any,
                args: tuple,
                num_warps: Any,
                stream: Any,
                meta: dict,
                *rest: Any,
                **more: Any,
            ) -> Any:
                if not recorder.listening or recorder._busy():
                    return original(
                        launcher, device, grid, args, num_warps, stream, meta, *rest, **more
                    )
                added = recorder.record(
                    launcher.kernel, args, {**meta, "num_warps": num_warps}, warp_units=True
                )
                recorder._enter()
                try:
                    return original(
                        launcher, device, grid, args, num_warps, stream, meta, *rest, **more
                    )
                except PortagpuError:  # portagpu refused the launch: it runs on no GPU either
                    recorder.forget(added)
                    raise
                finally:
                    recorder._leave()

            return launcher_call

        def native(original: Any) -> Any:
            # reached directly by the GPU fast path for a specialisation it has not seen
            def launcher_native(
                launcher: Any, grid: Any, args: tuple, nw: Any, stream: Any, meta: dict
            ) -> Any:
                if recorder.listening and not recorder._busy():
                    warp = getattr(launcher, "warp_size", None)
                    units = nw * warp // 32 if nw is not None and warp else nw
                    recorder.record(
                        launcher.kernel, args, {**meta, "num_warps": units}, warp_units=True
                    )
                recorder._enter()
                try:
                    return original(launcher, grid, args, nw, stream, meta)
                finally:
                    recorder._leave()

            return launcher_native

        def cuda_launch(original: Any) -> Any:
            def launch(
                kernel: Any,
                device: Any,
                grid: Any,
                args: tuple,
                block: Any,
                stream: Any,
                meta: dict,
            ) -> Any:
                added = recorder.record_cuda(kernel, block, meta) if recorder.listening else None
                try:
                    return original(kernel, device, grid, args, block, stream, meta)
                except (
                    PortagpuError
                ):  # refused (a block over the limits, ...): not a launch to check
                    if added is not None:
                        recorder.cuda_specs.pop(added, None)
                    raise

            return launch

        self._patch(TritonLauncher, "__call__", call)
        self._patch(TritonLauncher, "_native", native)
        self._patch(CudaKernel, "_launch", cuda_launch)
