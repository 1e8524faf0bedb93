"""pytest plugin: device-aware markers, fixtures and report lines.

Loaded through the ``pytest11`` entry point named ``portagpu``, so installing
portagpu is enough (with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` set, pass
``-p portagpu``; ``-p no:portagpu`` turns it off). docs/ci.md has the details.

Markers (a test may carry several: it needs any one of its backend markers,
and every warp size requirement)::

    @pytest.mark.gpu            any GPU: CUDA, ROCm or MPS
    @pytest.mark.cuda           an NVIDIA GPU  (cuda and rocm together: either)
    @pytest.mark.rocm           an AMD GPU
    @pytest.mark.mps            an Apple GPU
    @pytest.mark.cpu_only       only when the device portagpu chose is the CPU
    @pytest.mark.warp_size(64)  a warp/wavefront of 64 (warp_size(32, 64): either)
    @pytest.mark.multi_gpu(2)   two or more GPUs (portagpu/pytest_multi_gpu.py)

The backend markers come from the backend registry (portagpu/backends): a
backend registered by another package brings its own (`xpu`, ...), and
counts for `gpu` when it is a GPU.

A test whose requirement the device misses is skipped, with a reason naming
the detected device. ``--portagpu-device`` (or ``PORTAGPU_DEVICE``) forces a
backend for the whole session, code under test included; if the forced
backend is not there, device-marked tests fail instead of skipping, so a GPU
runner that lost its GPU turns CI red rather than green-with-skips.

This module is imported by every pytest run in an environment that has
portagpu, so it imports nothing heavy at import time, and detection runs at
most once per session, when the header, a device-marked test or a fixture
first needs it. A detection that raises (broken driver, half-installed
library) never breaks the run: the header says what failed and device-marked
tests are skipped.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from portagpu.device import Device

ENV_VAR = "PORTAGPU_DEVICE"
AUTO = "auto"
GPU_MARKER = "gpu"
WARP_MARKER = "warp_size"
WARP_HELP = "warp_size(n, ...): needs a device whose warp/wavefront size is one of n"


def backend_names() -> tuple[str, ...]:
    """The backends --portagpu-device and PORTAGPU_DEVICE accept: the registered
    ones (portagpu/backends; a backend that fails to load is left out)."""
    from portagpu.backends import backend_names as registered

    return registered()


def backend_markers() -> dict[str, tuple[frozenset[str], str]]:
    """marker name -> (backends that satisfy it, help line), in the order
    reasons list them: `gpu`, then each backend's own marker by priority."""
    from portagpu.backends import all_backends

    backends = all_backends()
    gpus = [b for b in backends if b.is_gpu]
    names = ", ".join(b.display_name for b in gpus)
    markers = {GPU_MARKER: (frozenset(b.name for b in gpus),
                            f"{GPU_MARKER}: needs a GPU of any vendor ({names}); skipped elsewhere")}
    for backend in backends:
        name, line = backend.marker()
        markers[name] = (frozenset({backend.name}), line)
    return markers


# user_properties keys: they ride on every report, through pytest-xdist too
REQUIRES_PROPERTY = "portagpu_requires"
SKIPPED_PROPERTY = "portagpu_skipped_for"


# --- detection, once per session --------------------------------------------

class DeviceState:
    """What the session knows about its device; detection runs on first use."""

    def __init__(self, forced: str | None, forced_by: str) -> None:
        self.forced = forced  # backend forced by option or env; None: automatic
        self.forced_by = forced_by  # "--portagpu-device" or "PORTAGPU_DEVICE"
        self._done = False
        self._device: Device | None = None
        self._error: str | None = None

    def _detect(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            from portagpu import device as device_module

            self._device = device_module.detect()
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message, never a crash
            lines = str(exc).strip().splitlines()
            self._error = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__

    @property
    def detected(self) -> bool:
        return self._done

    @property
    def device(self) -> Device | None:
        self._detect()
        return self._device

    @property
    def error(self) -> str | None:
        self._detect()
        return self._error

    def summary(self) -> str:
        """One phrase naming the device, or why there is none."""
        found = self.device
        if found is not None:
            return describe(found)
        if self.forced:
            return f"no {self.forced} device ({self.forced_by}={self.forced}): {self.error}"
        return f"no device, detection failed: {self.error}"


def describe(device: Device) -> str:
    """`cuda:0 'NVIDIA H100 80GB HBM3' (sm_90, warp 32)`."""
    where = f"{device.backend}:{device.index}" if device.is_gpu else device.backend
    facts = [device.arch or "", f"warp {device.warp_size}" if device.warp_size else ""]
    facts_text = ", ".join(fact for fact in facts if fact)
    return f"{where} {device.name!r}" + (f" ({facts_text})" if facts_text else "")


# --- requirements ------------------------------------------------------------

class MarkerError(ValueError):
    """A portagpu marker given arguments it cannot take."""


@dataclass(frozen=True)
class Requirement:
    """What a test's markers ask of the device; empty for unmarked tests."""

    backend_markers: tuple[str, ...] = ()  # any one of these
    warp_sizes: frozenset[int] = frozenset()  # any one of these
    backends: frozenset[str] = frozenset()  # the backends that meet backend_markers

    @property
    def empty(self) -> bool:
        return not self.backend_markers and not self.warp_sizes

    @property
    def backend_label(self) -> str:
        return " or ".join(self.backend_markers)

    @property
    def warp_label(self) -> str:
        return "warp_size=" + "|".join(str(n) for n in sorted(self.warp_sizes))

    @property
    def label(self) -> str:
        parts = [self.backend_label] if self.backend_markers else []
        return " and ".join(parts + ([self.warp_label] if self.warp_sizes else []))

    def unmet(self, device: Device) -> str | None:
        """The label of the first requirement `device` misses; None if it meets all."""
        if self.backend_markers and device.backend not in self.backends:
            return self.backend_label
        if self.warp_sizes and device.warp_size not in self.warp_sizes:
            return self.warp_label
        return None


def requirement_of(marks: Iterable[pytest.Mark],
                   markers: dict[str, tuple[frozenset[str], str]]) -> Requirement:
    """The requirement of a test's marks (closest first, as `iter_markers` gives);
    `markers` are the backend markers (`backend_markers()`)."""
    names: set[str] = set()
    warp_sizes: set[int] = set()
    for mark in marks:
        if mark.name in markers:
            if mark.args or mark.kwargs:
                raise MarkerError(f"@pytest.mark.{mark.name} takes no arguments")
            names.add(mark.name)
        elif mark.name == WARP_MARKER:
            warp_sizes.update(_warp_sizes(mark))
    ordered = tuple(name for name in markers if name in names)
    backends = frozenset().union(*(markers[name][0] for name in ordered))
    return Requirement(ordered, frozenset(warp_sizes), backends)


def _warp_sizes(mark: pytest.Mark) -> Iterator[int]:
    if mark.kwargs or not mark.args:
        raise MarkerError("@pytest.mark.warp_size needs one or more sizes, e.g. warp_size(64)")
    for value in mark.args:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise MarkerError(f"@pytest.mark.warp_size sizes are positive ints, not {value!r}")
        yield value


# --- hooks -------------------------------------------------------------------

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("portagpu", "portagpu device selection")
    group.addoption(
        "--portagpu-device",
        choices=(*backend_names(), AUTO),
        default=None,
        help=(
            "force portagpu's backend for this session; the code under test sees it "
            "through PORTAGPU_DEVICE. 'auto' ignores PORTAGPU_DEVICE. "
            "Default: PORTAGPU_DEVICE if set, else automatic detection."
        ),
    )


def _requested_backend(config: pytest.Config) -> tuple[str | None, str]:
    """The forced backend and what forced it; UsageError for a bad PORTAGPU_DEVICE."""
    option = config.getoption("portagpu_device", default=None)
    if option:
        return (None if option == AUTO else option), "--portagpu-device"
    raw = os.environ.get(ENV_VAR, "")
    value = raw.strip().lower()
    if not value:
        return None, ""
    names = backend_names()
    if value not in names:
        raise pytest.UsageError(
            f"{ENV_VAR}={raw!r} is not a portagpu backend; use one of "
            f"{', '.join(names)}, or unset it for automatic detection"
        )
    return value, ENV_VAR


STATE_KEY = pytest.StashKey["DeviceState"]()

# the multi_gpu(n) marker lives in its own module; pytest loads it with this one
pytest_plugins = ("portagpu.pytest_multi_gpu",)


def pytest_configure(config: pytest.Config) -> None:
    markers = backend_markers()
    for _, line in markers.values():
        config.addinivalue_line("markers", line)
    config.addinivalue_line("markers", WARP_HELP)
    forced, forced_by = _requested_backend(config)
    state = DeviceState(forced, forced_by)
    config.stash[STATE_KEY] = state
    config.pluginmanager.register(PortagpuSession(config, state, markers), "portagpu-session")


class PortagpuSession:
    """The per-session half of the plugin: holds the device and the counts."""

    def __init__(self, config: pytest.Config, state: DeviceState,
                 markers: dict[str, tuple[frozenset[str], str]]) -> None:
        self.config = config
        self.state = state
        self.markers = markers
        self.skipped: Counter[str] = Counter()
        self.ran = 0
        # The code under test calls portagpu.detect() too: it must see the same backend.
        self.env = pytest.MonkeyPatch()
        if state.forced_by == "--portagpu-device":
            if state.forced:
                self.env.setenv(ENV_VAR, state.forced)
            else:
                self.env.delenv(ENV_VAR, raising=False)

    def pytest_unconfigure(self) -> None:
        self.env.undo()

    def pytest_report_header(self) -> str:
        state = self.state
        line = f"portagpu: {state.summary()}"
        if state.device is not None:
            line += f" via {state.device.source}" if state.device.source else ""
            line += f" [{state.forced_by}={state.forced}]" if state.forced else ""
        elif not state.forced:
            line += "; device-marked tests will be skipped"
        return line

    @pytest.hookimpl(trylast=True)  # after -m/-k deselection: only selected tests detect
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            try:
                requirement = requirement_of(item.iter_markers(), self.markers)
            except MarkerError:
                continue  # reported as a failure at setup, for that test only
            if requirement.empty:
                continue
            item.user_properties.append((REQUIRES_PROPERTY, requirement.label))
            reason = self._skip_reason(requirement)
            if reason is not None:
                label, text = reason
                item.user_properties.append((SKIPPED_PROPERTY, label))
                # a skip mark, not pytest.skip() here: the report points at the test
                item.add_marker(pytest.mark.skip(reason=f"portagpu: {text}"))

    def _skip_reason(self, requirement: Requirement) -> tuple[str, str] | None:
        device = self.state.device
        if device is None:
            if self.state.forced:
                return None  # fails at setup: the device was asked for explicitly
            return requirement.label, f"needs {requirement.label}; {self.state.summary()}"
        unmet = requirement.unmet(device)
        if unmet is None:
            return None
        return unmet, f"needs {unmet}; detected {self.state.summary()}"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        try:
            requirement = requirement_of(item.iter_markers(), self.markers)
        except MarkerError as exc:
            pytest.fail(f"portagpu: {exc}", pytrace=False)
        if not requirement.empty and self.state.forced and self.state.device is None:
            pytest.fail(f"portagpu: needs {requirement.label}; {self.state.summary()}",
                        pytrace=False)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        properties = dict(report.user_properties)
        if report.when == "setup" and report.skipped and SKIPPED_PROPERTY in properties:
            self.skipped[str(properties[SKIPPED_PROPERTY])] += 1
        elif report.when == "call" and REQUIRES_PROPERTY in properties:
            self.ran += 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.skipped and not self.ran:
            if self.state.detected and self.state.device is None:
                terminalreporter.write_line(f"portagpu: {self.state.summary()}")
            return  # no device-marked test ran or skipped: nothing to count
        total = sum(self.skipped.values())
        detail = ", ".join(f"{label}: {n}" for label, n in sorted(self.skipped.items()))
        line = f"portagpu: {total} skipped for vendor" + (f" ({detail})" if detail else "")
        line += f"; {self.ran} device-marked ran; device {self.state.summary()}"
        terminalreporter.write_line(line)


# --- fixtures ----------------------------------------------------------------

@pytest.fixture(scope="session")
def device(request: pytest.FixtureRequest) -> Device:
    """The portagpu Device this session runs on; skips the test if there is none."""
    state = request.config.stash[STATE_KEY]
    found = state.device
    if found is None:
        message = f"portagpu: {state.summary()}"
        if state.forced:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return found


@pytest.fixture(scope="session")
def torch_device(device: Device) -> Any:
    """`torch.device` of the session's device; skips the test if torch is missing."""
    torch = pytest.importorskip("torch", reason="portagpu: torch_device needs torch")
    return torch.device(device.torch_device)
