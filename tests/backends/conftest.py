"""pytester for the new-vendor test (loaded from pytest_configure: see tests/plugin/conftest.py)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")
