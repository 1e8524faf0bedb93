"""Vendor backends, in detection order. Each is a package: probe.py finds
devices, telemetry.py reads them, runtime.py launches work on them."""

from __future__ import annotations

import importlib
from functools import cache

from portagpu.backends.base import Backend

# detection order: the first backend with devices wins
_ORDER = {
    "cuda": "portagpu.backends.nvidia",
    "rocm": "portagpu.backends.amd",
    "mps": "portagpu.backends.apple",
    "cpu": "portagpu.backends.cpu",
}


@cache
def get_backend(name: str) -> Backend:
    try:
        module = importlib.import_module(_ORDER[name])
    except KeyError:
        raise KeyError(f"unknown backend {name!r}; known: {', '.join(_ORDER)}") from None
    return module.BACKEND


def all_backends() -> list[Backend]:
    return [get_backend(name) for name in _ORDER]


def backend_for(device) -> Backend:  # noqa: ANN001 - Device, kept untyped to avoid a cycle
    return get_backend(device.backend)
