import sys

import pytest

from portagpu.device import clear_cache


@pytest.fixture(autouse=True)
def fresh_detection(monkeypatch):
    """Each test detects anew, with no override unless it sets one."""
    monkeypatch.delenv("PORTAGPU_DEVICE", raising=False)
    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def swap_module(monkeypatch):
    """Put a stand-in module into sys.modules for the test's duration."""

    def swap(name, module):
        monkeypatch.setitem(sys.modules, name, module)

    return swap
