"""Fixtures for the compile-check tests.

Real Triton compiles (for gfx942, gfx1100, sm_90, ...) run in worker processes
and are slow on a 2-core machine, so every test that compiles shares one cache
folder for the session: each (kernel, target) is compiled once per test run.
Kernels live in kernelcheck_samples.py, imported by file as the workers import it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from portagpu.kernelcheck.toolchain import toolchain


@pytest.fixture(scope="session")
def kc_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("kernelcheck-cache"))


@pytest.fixture(scope="session")
def kc_cache(kc_cache_dir: str):
    from portagpu.kernelcheck.cache import CompileCache

    return CompileCache(kc_cache_dir)


SAMPLES = Path(__file__).with_name("kernelcheck_samples.py")


@pytest.fixture(scope="session")
def samples():
    from portagpu.kernelcheck.discover import load_path

    return load_path(SAMPLES)


def needs_triton_backends() -> pytest.MarkDecorator:
    tools = toolchain()
    why = tools.triton_skip_reason("amd") or tools.triton_skip_reason("nvidia")
    return pytest.mark.skipif(bool(why), reason=f"compile check unavailable: {why}")
