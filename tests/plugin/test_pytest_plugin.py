"""The pytest plugin, exercised through nested pytest runs (`pytester`).

Devices are simulated by replacing portagpu.device.detect in-process (see
conftest.simulate); the runs that pass --portagpu-device cpu or
PORTAGPU_DEVICE=cpu use the real detection, which finds the CPU everywhere.
"""

from __future__ import annotations

import os

import pytest

from portagpu import pytest_plugin
from portagpu.errors import DeviceNotFoundError

# One test per requirement; the names say which device each one needs.
MARKED_TESTS = """
import pytest

@pytest.mark.gpu
def test_gpu(): pass

@pytest.mark.cuda
def test_cuda(): pass

@pytest.mark.rocm
def test_rocm(): pass

@pytest.mark.mps
def test_mps(): pass

@pytest.mark.cpu_only
def test_cpu_only(): pass

@pytest.mark.warp_size(64)
def test_wave64(): pass

@pytest.mark.warp_size(32)
def test_warp32(): pass

@pytest.mark.cuda
@pytest.mark.rocm
def test_cuda_or_rocm(): pass

@pytest.mark.gpu
@pytest.mark.warp_size(64)
def test_gpu_wave64(): pass

def test_unmarked(): pass
"""

# Which of MARKED_TESTS run (the rest skip) on each simulated device.
RUNS_ON = {
    "cpu": {"test_cpu_only", "test_unmarked"},
    "cuda": {"test_gpu", "test_cuda", "test_warp32", "test_cuda_or_rocm", "test_unmarked"},
    "rocm": {"test_gpu", "test_rocm", "test_wave64", "test_cuda_or_rocm", "test_gpu_wave64",
             "test_unmarked"},
    "mps": {"test_gpu", "test_mps", "test_warp32", "test_unmarked"},
}
ALL_TESTS = {line[4:line.index("(")] for line in MARKED_TESTS.splitlines()
             if line.startswith("def test_")}


def outcomes(result: pytest.RunResult) -> dict[str, str]:
    """test name -> PASSED/SKIPPED/ERROR/FAILED, from a `-rA` style verbose run."""
    found = {}
    for line in result.outlines:
        for word in ("PASSED", "SKIPPED", "ERROR", "FAILED"):
            if line.startswith("test_") and "::" in line and f" {word}" in line:
                found[line.split("::")[1].split()[0]] = word
    return found


@pytest.mark.parametrize("backend", sorted(RUNS_ON))
def test_markers_run_or_skip_by_simulated_device(pytester, simulate, backend):
    simulate(backend)
    pytester.makepyfile(test_marked=MARKED_TESTS)
    result = pytester.runpytest("-v", "--strict-markers")
    got = outcomes(result)
    assert set(got) == ALL_TESTS
    expected = {name: "PASSED" if name in RUNS_ON[backend] else "SKIPPED" for name in ALL_TESTS}
    assert got == expected
    assert result.ret == pytest.ExitCode.OK


def test_skip_reason_names_the_requirement_and_the_detected_device(pytester, simulate):
    simulate("rocm")
    pytester.makepyfile(test_marked=MARKED_TESTS)
    result = pytester.runpytest("-rs")
    result.stdout.fnmatch_lines([
        "SKIPPED [[]1[]] test_marked.py:*: portagpu: needs cuda; "
        "detected rocm:0 'AMD Instinct MI300X' (gfx942, warp 64)",
        "SKIPPED [[]1[]] test_marked.py:*: portagpu: needs warp_size=32; detected rocm:0 *",
    ])


def test_header_names_the_detected_device(pytester, simulate):
    simulate("cuda")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(
        ["portagpu: cuda:0 'NVIDIA H100 80GB HBM3' (sm_90, warp 32) via torch"]
    )


def test_summary_counts_skips_per_vendor_requirement(pytester, simulate):
    simulate("cpu")
    pytester.makepyfile(test_marked=MARKED_TESTS)
    result = pytester.runpytest()
    skipped = len(ALL_TESTS - RUNS_ON["cpu"])
    result.stdout.fnmatch_lines([
        f"portagpu: {skipped} skipped for vendor (cuda: 1, cuda or rocm: 1, gpu: 2, mps: 1, "
        "rocm: 1, warp_size=32: 1, warp_size=64: 1); 1 device-marked ran; "
        "device cpu 'Simulated CPU' (x86_64)",
    ])
    result.assert_outcomes(passed=2, skipped=skipped)


def test_summary_is_silent_when_no_test_is_device_marked(pytester, simulate):
    simulate("cpu")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest()
    assert not [line for line in result.outlines if "skipped for vendor" in line]


def test_markers_are_registered(pytester):
    result = pytester.runpytest("--markers")
    for name in ("gpu", "cuda", "rocm", "mps", "cpu_only", "warp_size(n, ...)"):
        result.stdout.fnmatch_lines([f"@pytest.mark.{name}: *"])


def test_option_forces_the_backend_for_the_code_under_test(pytester):
    # Real detection: the CPU backend exists on every machine.
    pytester.makepyfile("""
        import os
        import portagpu

        def test_env_and_detect():
            assert os.environ["PORTAGPU_DEVICE"] == "cpu"
            assert portagpu.detect().backend == "cpu"
    """)
    result = pytester.runpytest("--portagpu-device", "cpu")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["portagpu: cpu * [[]--portagpu-device=cpu[]]"])
    assert "PORTAGPU_DEVICE" not in os.environ  # restored after the run


def test_env_var_forces_the_backend(pytester, monkeypatch):
    monkeypatch.setenv("PORTAGPU_DEVICE", "CPU ")  # case and spaces as portagpu accepts them
    pytester.makepyfile("""
        import pytest

        @pytest.mark.gpu
        def test_gpu(): pass

        @pytest.mark.cpu_only
        def test_cpu(device):
            assert device.backend == "cpu"
    """)
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["portagpu: cpu * [[]PORTAGPU_DEVICE=cpu[]]"])


def test_auto_option_overrides_the_env_var(pytester, monkeypatch, simulate):
    spy = simulate("rocm")
    monkeypatch.setenv("PORTAGPU_DEVICE", "cuda")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--portagpu-device", "auto")
    result.assert_outcomes(passed=1)
    assert spy.env_seen == [None]  # detection ran with the variable removed
    assert os.environ["PORTAGPU_DEVICE"] == "cuda"  # and it came back afterwards


def test_unknown_device_option_is_a_usage_error(pytester):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--portagpu-device", "tpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--portagpu-device: invalid choice: 'tpu'*"])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_unknown_env_device_is_a_usage_error(pytester, monkeypatch):
    monkeypatch.setenv("PORTAGPU_DEVICE", "tpu")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: PORTAGPU_DEVICE='tpu' is not a portagpu backend; use one of cuda, rocm, mps, cpu*"]
    )
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_broken_detection_skips_device_tests_and_says_why(pytester, simulate):
    simulate(RuntimeError("CUDA driver version is insufficient for CUDA runtime version"))
    pytester.makepyfile(test_marked=MARKED_TESTS)
    result = pytester.runpytest("-rs")
    result.stdout.fnmatch_lines([
        "portagpu: no device, detection failed: RuntimeError: CUDA driver version is "
        "insufficient for CUDA runtime version; device-marked tests will be skipped",
        "SKIPPED * portagpu: needs cuda; no device, detection failed: RuntimeError: *",
    ])
    result.assert_outcomes(passed=1, skipped=len(ALL_TESTS) - 1)


def test_forced_backend_that_is_missing_fails_device_tests(pytester, simulate):
    simulate(DeviceNotFoundError("PORTAGPU_DEVICE=cuda asked for CUDA (NVIDIA), but none was found"))
    pytester.makepyfile(test_marked=MARKED_TESTS)
    result = pytester.runpytest("--portagpu-device", "cuda")
    result.assert_outcomes(passed=1, errors=len(ALL_TESTS) - 1)
    result.stdout.fnmatch_lines(["*portagpu: needs cuda; no cuda device (--portagpu-device=cuda)*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize("decorator, message", [
    ("warp_size()", "warp_size needs one or more sizes"),
    ("warp_size('64')", "warp_size sizes are positive ints, not '64'"),
    ("cuda(0)", "@pytest.mark.cuda takes no arguments"),
])
def test_marker_misuse_fails_only_that_test(pytester, simulate, decorator, message):
    simulate("cuda")
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.{decorator}
        def test_misused(): pass

        @pytest.mark.cuda
        def test_fine(): pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*portagpu: *{message}*"])
    assert "Traceback" not in result.stdout.str()


def test_device_fixture_hands_over_the_detected_device(pytester, simulate):
    simulate("rocm", index=1)
    pytester.makepyfile("""
        def test_device(device):
            assert (device.backend, device.index, device.warp_size) == ("rocm", 1, 64)
            assert device.torch_device == "cuda:1"  # torch names ROCm devices cuda
    """)
    pytester.runpytest().assert_outcomes(passed=1)


def test_torch_device_fixture(pytester, simulate):
    pytest.importorskip("torch")
    simulate("mps")
    pytester.makepyfile("""
        import torch

        def test_torch_device(torch_device):
            assert torch_device == torch.device("mps")
    """)
    pytester.runpytest().assert_outcomes(passed=1)


def test_device_fixture_skips_when_detection_fails(pytester, simulate):
    simulate(OSError("libcuda.so: cannot open shared object file"))
    pytester.makepyfile("def test_device(device): pass")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*portagpu: no device, detection failed: OSError: libcuda.so*"])


def test_detection_is_lazy_and_runs_once(pytester, simulate):
    spy = simulate("cpu")
    pytester.makepyfile(test_marked=MARKED_TESTS)
    # no header, no marked test selected, no fixture: nothing asks for the device
    pytester.runpytest("--no-header", "-m", "not (gpu or cuda or rocm or mps or cpu_only"
                       " or warp_size)").assert_outcomes(passed=1)
    assert spy.calls == 0
    pytester.makepyfile(test_fixture="def test_uses(device): pass")
    pytester.runpytest().assert_outcomes(passed=3, skipped=len(ALL_TESTS) - 2)
    assert spy.calls == 1  # header, every marked test and the fixture share one detection


def test_plugin_loads_from_its_entry_point_in_a_fresh_process(pytester):
    """Installing portagpu is enough: no conftest, no -p, a new interpreter."""
    pytester.makepyfile("""
        import pytest

        @pytest.mark.cuda
        def test_cuda(): pass

        @pytest.mark.cpu_only
        def test_cpu(): pass
    """)
    result = pytester.runpytest_subprocess("--portagpu-device", "cpu", "--strict-markers")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["portagpu: cpu *", "portagpu: 1 skipped for vendor (cuda: 1)*"])


def test_backend_names_match_the_device_layer():
    from portagpu.device import BACKEND_NAMES, ENV_VAR

    assert pytest_plugin.backend_names() == tuple(BACKEND_NAMES) == ("cuda", "rocm", "mps", "cpu")
    assert list(pytest_plugin.backend_markers()) == ["gpu", "cuda", "rocm", "mps", "cpu_only"]
    assert pytest_plugin.ENV_VAR == ENV_VAR


def test_autoload_disabled_loads_with_p_portagpu(pytester, monkeypatch, simulate):
    simulate("cpu")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile("""
        import pytest

        @pytest.mark.cuda
        def test_cuda(): pass
    """)
    quiet = ("-W", "ignore::pytest.PytestUnknownMarkWarning")
    pytester.runpytest(*quiet).assert_outcomes(passed=1)  # no plugin: the marker is inert
    loaded = pytester.runpytest("-p", "portagpu", *quiet)
    loaded.assert_outcomes(skipped=1)
    loaded.stdout.fnmatch_lines(["portagpu: 1 skipped for vendor (cuda: 1)*"])


def test_p_no_portagpu_turns_it_off(pytester, simulate):
    spy = simulate("cpu")
    pytester.makepyfile("""
        import pytest

        @pytest.mark.cuda
        def test_cuda(): pass
    """)
    result = pytester.runpytest("-p", "no:portagpu", "-W", "ignore::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=1)
    assert spy.calls == 0
