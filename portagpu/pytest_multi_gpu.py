"""pytest: `@pytest.mark.multi_gpu(n)`, loaded with portagpu's plugin.

A test marked `multi_gpu(2)` runs where portagpu sees at least two GPUs of
the detected vendor, and is skipped elsewhere with a reason naming what is
there (`needs multi_gpu(2); detected 1 GPU: cuda:0 'NVIDIA H200'`). Skips are
counted in the plugin's summary line like the vendor markers. To run the
test's body under one process per GPU, or on the CPU with gloo in CI, use
`portagpu.distributed.testing.spawn` (docs/distributed.md).
"""

from __future__ import annotations

import pytest

from portagpu.pytest_plugin import REQUIRES_PROPERTY, SKIPPED_PROPERTY, STATE_KEY, describe

MARKER = "multi_gpu"
HELP = (
    "multi_gpu(n): needs n or more GPUs of the detected vendor; skipped elsewhere "
    "(run the body on them with portagpu.distributed.testing.spawn)"
)
_COUNT_KEY = pytest.StashKey["tuple[int, str]"]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", HELP)


def required_gpus(mark: pytest.Mark) -> int:
    """n of multi_gpu(n); ValueError saying how to write it otherwise."""
    if mark.kwargs or len(mark.args) != 1:
        raise ValueError("@pytest.mark.multi_gpu takes one count, e.g. multi_gpu(2)")
    (count,) = mark.args
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"@pytest.mark.multi_gpu needs a positive int, not {count!r}")
    return count


def _gpus(config: pytest.Config) -> tuple[int, str]:
    """(GPUs of the session's backend, a phrase naming them), found once."""
    if _COUNT_KEY not in config.stash:
        state = config.stash[STATE_KEY]
        first = state.device
        if first is None:
            found: tuple[int, str] = (0, state.summary())
        elif not first.is_gpu:
            found = (0, f"no GPU: {describe(first)}")
        else:
            from portagpu.device import devices

            try:
                gpus = [d for d in devices() if d.is_gpu]
            except Exception:  # noqa: BLE001 - a probe failing now: count the one we know
                gpus = [first]
            plural = "" if len(gpus) == 1 else "s"
            found = (len(gpus), f"{len(gpus)} GPU{plural}: " + ", ".join(map(describe, gpus)))
        config.stash[_COUNT_KEY] = found
    return config.stash[_COUNT_KEY]


@pytest.hookimpl(trylast=True)  # after -m/-k deselection, like the vendor markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        mark = item.get_closest_marker(MARKER)
        if mark is None:
            continue
        try:
            needed = required_gpus(mark)
        except ValueError:
            continue  # failed at setup, for that test only
        label = f"multi_gpu({needed})"
        item.user_properties.append((REQUIRES_PROPERTY, label))
        count, phrase = _gpus(config)
        if count < needed:
            item.user_properties.append((SKIPPED_PROPERTY, label))
            item.add_marker(pytest.mark.skip(reason=f"portagpu: needs {label}; detected {phrase}"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    mark = item.get_closest_marker(MARKER)
    if mark is not None:
        try:
            required_gpus(mark)
        except ValueError as exc:
            pytest.fail(f"portagpu: {exc}", pytrace=False)
