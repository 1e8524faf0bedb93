"""Small helpers the vendor probes share: guarded imports and number clean-up."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any


def any_path_exists(paths: tuple[str, ...]) -> bool:
    return any(os.path.exists(p) for p in paths)


def loaded(name: str) -> ModuleType | None:
    """The module if the process already imported it (or a test put a fake there)."""
    return sys.modules.get(name)


def optional_import(name: str) -> ModuleType | None:
    """Import `name` or return None. Vendor libraries fail in odd ways when their
    native part is missing: PyPI's amdsmi raises KeyError, others OSError."""
    try:
        return importlib.import_module(name)
    except (ImportError, KeyError, OSError, RuntimeError, AttributeError):
        return None


def number(value: Any) -> float | None:
    """A reading as a float; None for "N/A" strings, UINT32_MAX sentinels and errors."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value in (0xFFFFFFFF, 0xFFFF, 0xFFFFFFFFFFFFFFFF) or value < 0:
            return None
        return float(value)
    try:
        return number(float(str(value).strip().split()[0]))
    except (ValueError, IndexError):
        return None


def text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def torch_cuda_initialized(torch: ModuleType | None) -> bool:
    """True if torch already set up CUDA/HIP in this process, so asking it is free."""
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:  # noqa: BLE001 - a broken torch is just "no"
        return False


def call(fn: Any, *args: Any) -> Any:
    """One management-library query; None when this GPU or driver does not
    support it (NVMLError_NotSupported, AmdSmiLibraryException, ...)."""
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001
        return None


@contextmanager
def library_session(lib: ModuleType | None, init: str, shutdown: str) -> Iterator[ModuleType | None]:
    """Yields `lib` initialised through its `init` function, shut down after;
    None when the library is missing or its driver fails to initialise."""
    if lib is not None:
        try:
            getattr(lib, init)()
        except Exception:  # noqa: BLE001 - NVMLError_LibraryNotFound, no amdgpu driver, ...
            lib = None
    if lib is None:
        yield None
        return
    try:
        yield lib
    finally:
        call(getattr(lib, shutdown, None))


def cupy_device_properties(cupy: ModuleType | None, *, hip: bool) -> tuple[list[dict], int] | None:
    """CuPy's per-device property dicts and runtime version, when CuPy was built
    for this vendor (`hip`: ROCm); ([], 0) for the other vendor's build; None
    when CuPy is absent or sees no GPU (it raises CUDARuntimeError then)."""
    if cupy is None:
        return None
    try:
        runtime = cupy.cuda.runtime
        if bool(getattr(runtime, "is_hip", False)) != hip:
            return [], 0
        props = [runtime.getDeviceProperties(i) for i in range(runtime.getDeviceCount())]
        return props, runtime.runtimeGetVersion()
    except Exception:  # noqa: BLE001
        return None
