"""Fixtures for testing the pytest plugin with pytest's own `pytester`.

`pytest_plugins = ["pytester"]` is honoured only in conftest files pytest loads
at start-up (the rootdir's, or those on the command line's paths); when the
whole suite runs, this one is found during collection and pytest would refuse
it. Loading the plugin from `pytest_configure` works in both cases.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from portagpu import device as device_module
from portagpu.device import Device


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture(scope="session", autouse=True)
def _heavy_modules_stay_imported() -> None:
    """pytester's in-process runs drop the modules first imported inside them. torch
    cannot be imported twice in one process, and Hypothesis' plugin would re-import
    (and assert-rewrite) ~150 modules per nested run: import both once, out here."""
    for name in ("torch", "hypothesis"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass


@pytest.fixture(autouse=True)
def _no_forced_device(monkeypatch: pytest.MonkeyPatch) -> None:
    # The outer run may itself be forced (PORTAGPU_DEVICE=cuda on a GPU runner).
    monkeypatch.delenv("PORTAGPU_DEVICE", raising=False)


def make_device(backend: str, **overrides: Any) -> Device:
    """A Device as each vendor's probe would report it (the hardware is simulated)."""
    facts: dict[str, dict[str, Any]] = {
        "cuda": dict(vendor="nvidia", name="NVIDIA H100 80GB HBM3", arch="sm_90", warp_size=32,
                     multiprocessors=132, blas="cuBLAS", source="torch"),
        "rocm": dict(vendor="amd", name="AMD Instinct MI300X", arch="gfx942", warp_size=64,
                     multiprocessors=304, blas="rocBLAS/hipBLASLt", source="amdsmi"),
        "mps": dict(vendor="apple", name="Apple M3 Max", arch=None, warp_size=32,
                    multiprocessors=40, blas="MPS", source="torch"),
        "cpu": dict(vendor="cpu", name="Simulated CPU", arch="x86_64", warp_size=None,
                    multiprocessors=2, blas="OpenBLAS", source="os"),
    }[backend]
    fields = dict(backend=backend, index=0, memory_total=None, **facts)
    fields.update(overrides)
    return Device(**fields)


class DetectSpy:
    """Stands in for portagpu.device.detect: returns a device or raises, and counts calls."""

    def __init__(self, outcome: Device | BaseException) -> None:
        self.outcome = outcome
        self.calls = 0
        self.env_seen: list[str | None] = []

    def __call__(self) -> Device:
        import os

        self.calls += 1
        self.env_seen.append(os.environ.get("PORTAGPU_DEVICE"))
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


@pytest.fixture
def simulate(monkeypatch: pytest.MonkeyPatch) -> Callable[..., DetectSpy]:
    """simulate("rocm") / simulate(SomeError(...)): what the plugin's detection returns
    in the nested in-process pytest runs of this test."""

    def install(outcome: str | Device | BaseException, **overrides: Any) -> DetectSpy:
        if isinstance(outcome, str):
            outcome = make_device(outcome, **overrides)
        spy = DetectSpy(outcome)
        monkeypatch.setattr(device_module, "detect", spy)
        return spy

    return install
