"""Vendor backends, found through one registry: the `portagpu.backends`
entry-point group (as Triton finds its own through `triton.backends`).

pyproject.toml registers the four built-ins; a third party adds a vendor with
one line in its own package's metadata:

    [project.entry-points."portagpu.backends"]
    xpu = "portagpu_xpu"        # a module whose BACKEND is a Backend named "xpu"

Each backend is a package: probe.py finds devices, telemetry.py reads them,
runtime.py compiles and launches on them, __init__.py holds BACKEND with the
vendor's facts. Backends are probed in `priority` order (then by name), so
detection is deterministic whatever order the entry points come in.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from functools import cache
from types import ModuleType
from typing import Any

from portagpu.backends.base import Backend

ENTRY_POINT_GROUP = "portagpu.backends"


def _entry_points() -> list[Any]:
    """The group's entry points (importlib.metadata costs ~25 ms to import:
    only done when a backend is first asked for, never at `import portagpu`)."""
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _builtin_modules() -> dict[str, str]:
    """Backend packages next to this file, for a source checkout whose metadata
    predates or lacks the entry points (an editable install made before they
    existed, `python -P` in a checkout). An installed portagpu has them."""
    return {
        info.name: f"{__name__}.{info.name}"
        for info in pkgutil.iter_modules(__path__)
        if info.ispkg
    }


def _load(name: str, target: Any) -> Backend:
    module = target if isinstance(target, ModuleType) else None
    backend = getattr(module, "BACKEND", None) if module is not None else target
    if not isinstance(backend, Backend):
        raise TypeError(
            f"entry point {ENTRY_POINT_GROUP}:{name} gives {target!r}, "
            "not a Backend or a module with BACKEND"
        )
    return backend


# entry-point name -> why it could not be loaded (a broken third-party
# backend must not stop portagpu, its pytest plugin or the other backends)
_BROKEN: dict[str, str] = {}


@cache
def _registry() -> dict[str, Backend]:
    """name -> backend, in detection order."""
    points = _entry_points()
    _BROKEN.clear()
    found: list[Backend] = []
    for point in points:
        try:
            backend = _load(point.name, point.load())
            if backend.name != point.name:
                raise ValueError(
                    f"it registers a backend named {backend.name!r}; the names must match"
                )
        except Exception as exc:  # noqa: BLE001 - reported by broken_backends() and get_backend()
            _BROKEN[point.name] = (
                f"entry point {ENTRY_POINT_GROUP}:{point.name} = {point.value}: {exc}"
            )
            continue
        found.append(backend)
    if not any(p.value.startswith(f"{__name__}.") for p in points):
        for module in _builtin_modules().values():
            found.append(_load(module, importlib.import_module(module)))
    ordered: dict[str, Backend] = {}
    for backend in sorted(found, key=lambda b: (b.priority, b.name)):
        ordered.setdefault(backend.name, backend)
    return ordered


def clear_registry() -> None:
    """Read the entry points again (tests that register a backend)."""
    _registry.cache_clear()
    _torch_owner.cache_clear()


def backend_names() -> tuple[str, ...]:
    """Registered backend names in detection order: "cuda", "rocm", "mps", "cpu", ..."""
    return tuple(_registry())


def all_backends() -> list[Backend]:
    return list(_registry().values())


def find_backend(name: str) -> Backend | None:
    return _registry().get(name)


def broken_backends() -> dict[str, str]:
    """Registered backends that failed to load: name -> why."""
    _registry()
    return dict(_BROKEN)


def get_backend(name: str) -> Backend:
    backend = _registry().get(name)
    if backend is None:
        if name in _BROKEN:
            raise KeyError(f"backend {name!r} failed to load: {_BROKEN[name]}")
        raise KeyError(f"unknown backend {name!r}; known: {', '.join(_registry())}")
    return backend


def backend_for(device) -> Backend:  # noqa: ANN001 - Device, kept untyped to avoid a cycle
    return get_backend(device.backend)


@cache
def _torch_owner(device_type: str, torch_id: int) -> Backend | None:
    torch = sys.modules.get("torch")
    for backend in all_backends():
        if backend.torch_device_type == device_type and backend.serves_torch(torch):
            return backend
    return None


def backend_for_torch(device_type: str) -> Backend | None:
    """The backend whose devices hold torch tensors of `device_type` ("cuda",
    "mps", "cpu", ...) in this process's torch build; None if none is registered."""
    return _torch_owner(device_type, id(sys.modules.get("torch")))


def backend_for_cupy(cupy: ModuleType) -> Backend | None:
    """The backend whose devices hold this CuPy build's arrays."""
    for backend in all_backends():
        if backend.serves_cupy(cupy):
            return backend
    return None


__all__ = [
    "ENTRY_POINT_GROUP",
    "Backend",
    "all_backends",
    "backend_for",
    "backend_for_cupy",
    "backend_for_torch",
    "backend_names",
    "broken_backends",
    "clear_registry",
    "find_backend",
    "get_backend",
]
