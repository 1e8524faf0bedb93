"""@pytest.mark.multi_gpu(n), through nested pytest runs with SIMULATED
devices (portagpu.device.detect and devices replaced, see conftest.simulate)."""

from __future__ import annotations

import pytest

from portagpu import device as device_module

from .conftest import make_device

TESTS = """
import pytest

@pytest.mark.multi_gpu(2)
def test_two(): pass

@pytest.mark.multi_gpu(4)
def test_four(): pass

@pytest.mark.cuda
@pytest.mark.multi_gpu(2)
def test_two_nvidia(): pass

def test_unmarked(): pass
"""


def simulate_gpus(monkeypatch, simulate, backend: str, count: int) -> None:
    simulate(backend)
    found = [make_device(backend, index=i) for i in range(count)]
    monkeypatch.setattr(device_module, "devices", lambda: found)


@pytest.mark.parametrize(
    ("backend", "count", "passed"),
    [
        ("cuda", 2, {"test_two", "test_two_nvidia", "test_unmarked"}),
        ("cuda", 4, {"test_two", "test_four", "test_two_nvidia", "test_unmarked"}),
        ("rocm", 2, {"test_two", "test_unmarked"}),
        ("cuda", 1, {"test_unmarked"}),
        ("cpu", 1, {"test_unmarked"}),
    ],
)
def test_multi_gpu_runs_with_enough_gpus(pytester, simulate, monkeypatch, backend, count, passed):
    simulate_gpus(monkeypatch, simulate, backend, count)
    pytester.makepyfile(test_marked=TESTS)
    result = pytester.runpytest("-v", "--strict-markers")
    result.assert_outcomes(passed=len(passed), skipped=4 - len(passed))
    for name in passed:
        result.stdout.fnmatch_lines([f"*::{name} PASSED*"])


def test_skip_reason_names_the_gpus_found_and_the_summary_counts_it(
    pytester, simulate, monkeypatch
):
    simulate_gpus(monkeypatch, simulate, "cuda", 1)
    pytester.makepyfile(test_marked=TESTS)
    result = pytester.runpytest("-rs")
    result.stdout.fnmatch_lines(
        [
            "portagpu: 3 skipped for vendor (multi_gpu(2): 2, multi_gpu(4): 1); *",
            "SKIPPED [[]1[]] test_marked.py:*: portagpu: needs multi_gpu(2); detected 1 GPU: "
            "cuda:0 'NVIDIA H100 80GB HBM3' (sm_90, warp 32)",
        ]
    )


def test_on_the_cpu_the_reason_says_there_is_no_gpu(pytester, simulate, monkeypatch):
    simulate_gpus(monkeypatch, simulate, "cpu", 1)
    pytester.makepyfile(test_marked=TESTS)
    result = pytester.runpytest("-rs")
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1[]] *: portagpu: needs multi_gpu(2); detected no GPU: cpu 'Simulated CPU'*"]
    )


@pytest.mark.parametrize("marker", ["multi_gpu", "multi_gpu()", "multi_gpu(0)", "multi_gpu(n=2)"])
def test_a_misused_marker_fails_that_test_with_how_to_write_it(pytester, simulate, marker):
    simulate("cuda")
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.{marker}
        def test_bad(): pass

        def test_good(): pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)  # failed at setup, like the vendor markers
    result.stdout.fnmatch_lines(["*portagpu: @pytest.mark.multi_gpu *"])


def test_marker_is_registered(pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.multi_gpu(n): *"])
