"""`pytest --portagpu-compile-for`: launches in the user's tests are recorded (here
through Triton's interpreter on the CPU) and compiled for the targets at the end."""

import pytest

from .conftest import needs_triton_backends

pytestmark = needs_triton_backends()

TEST_FILE = """
import pytest
torch = pytest.importorskip("torch")
import triton
import triton.language as tl


@triton.jit
def doubler(x, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x + offsets, tl.load(x + offsets, mask=offsets < n) * 2, mask=offsets < n)


def test_doubles():
    x = torch.ones(8)
    doubler[(1,)](x, 8, BLOCK=16, num_warps={num_warps})
    assert x.tolist() == [2.0] * 8
"""


@pytest.fixture(autouse=True)
def _pytester_plugin(request):
    if not request.config.pluginmanager.has_plugin("pytester"):
        request.config.pluginmanager.import_plugin("pytester")
    # pytester's in-process runs drop modules first imported inside them, and torch
    # cannot be imported twice in one process: import it out here (as tests/plugin does)
    pytest.importorskip("torch")


@pytest.fixture
def run_suite(request, kc_cache_dir, monkeypatch):
    pytester = request.getfixturevalue("pytester")
    # a CPU runner testing Triton kernels sets this, so @triton.jit gives the interpreter's kernels
    monkeypatch.setenv("TRITON_INTERPRET", "1")

    def run(num_warps: int, *args: str):
        pytester.makepyfile(test_kernels=TEST_FILE.format(num_warps=num_warps))
        return pytester.runpytest(
            "-p", "no:cacheprovider", "--portagpu-kernel-cache", kc_cache_dir, *args
        )

    return run


def test_a_fitting_kernel_is_tabled_and_the_session_passes(run_suite):
    result = run_suite(4, "--portagpu-compile-for", "gfx942,sm_90")
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    out = result.stdout.str()
    assert "portagpu compile check for gfx942,sm_90" in out
    rows = [line for line in out.splitlines() if line.startswith("doubler")]
    assert len(rows) == 2 and all(line.rstrip().endswith("fits") for line in rows)
    assert any(" gfx942 " in line and "256/1024" in line for line in rows)  # 4 waves x 64 lanes
    assert any(" sm_90 " in line and "128/1024" in line for line in rows)


def test_a_kernel_that_cannot_run_on_a_target_fails_the_session(run_suite):
    result = run_suite(32, "--portagpu-compile-for", "gfx942,sm_90")
    result.assert_outcomes(passed=1)  # the test itself passed on the CPU...
    assert result.ret == 1  # ...but the kernel cannot launch on an MI300
    out = result.stdout.str()
    assert "2048 threads per block > 1024 (32 warps x 64 lanes)" in out
    assert "1 kernel specialisation(s) cannot run on a requested target; fails the session" in out


def test_warn_reports_without_failing(run_suite):
    result = run_suite(
        32, "--portagpu-compile-for", "gfx942", "--portagpu-compile-on-failure", "warn"
    )
    assert result.ret == 0 and "reported only (compile-on-failure = warn)" in result.stdout.str()


def test_pyproject_settings_and_a_json_report(run_suite, request, tmp_path):
    pytester = request.getfixturevalue("pytester")
    pytester.makepyprojecttoml(
        '[tool.portagpu]\ncompile-for = ["sm_90"]\ncompile-on-failure = "warn"\n'
    )
    report = tmp_path / "kernels.json"
    result = run_suite(4, "--portagpu-compile-report", str(report))
    assert result.ret == 0 and "portagpu compile check for sm_90" in result.stdout.str()
    import json

    data = json.loads(report.read_text())
    (check,) = data["checks"]
    assert (check["name"], check["target"], check["status"]) == ("doubler", "sm_90", "fits")
    assert check["origin"].endswith("test_kernels.py::test_doubles")


def test_a_bad_target_is_a_usage_error(run_suite):
    result = run_suite(4, "--portagpu-compile-for", "gfx942,tpu9")
    assert result.ret == 4 and "unknown target 'tpu9'" in result.stderr.str()


def test_without_the_option_nothing_is_wrapped(request):
    from triton.runtime.jit import JITFunction

    before = JITFunction.run
    pytester = request.getfixturevalue("pytester")
    pytester.makepyfile("def test_x(): pass")
    assert pytester.runpytest("-p", "no:cacheprovider").ret == 0
    assert JITFunction.run is before


def test_under_xdist_workers_record_and_the_controller_checks(run_suite):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    result = run_suite(32, "-n", "2", "--portagpu-compile-for", "gfx942")
    assert result.ret == 1 and "2048 threads per block > 1024" in result.stdout.str()
