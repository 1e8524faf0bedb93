"""The compile check in pytest: `--portagpu-compile-for gfx942,gfx1100`.

Records every distinct kernel specialisation the session launches (Triton
kernels through `kernel[grid](...)` or `portagpu.launch`, on the CPU
interpreter or a GPU; `portagpu.CudaKernel` launches), then at the end of the
session compiles each for the targets, prints a table and fails the session
when a kernel cannot run on a requested target (`--portagpu-compile-on-failure
warn` only reports). Settings may live in pyproject.toml:

    [tool.portagpu]
    compile-for = ["gfx942", "gfx1100"]
    compile-on-failure = "fail"          # or "warn"
    kernel-cache = ".cache/kernelcheck"  # default: the user cache folder

Imported by portagpu.pytest_plugin's hooks only; importing it imports nothing
heavy (Triton is imported when a session asks for the check).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

OPTION = "--portagpu-compile-for"
MAX_ROWS = 60  # more than this: print the problems only, unless -v
STASH = pytest.StashKey["KernelcheckSession"]()
WORKER_KEY = "portagpu_kernelcheck"


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("portagpu", "portagpu device selection")
    group.addoption(
        OPTION,
        dest="portagpu_compile_for",
        default=None,
        metavar="TARGETS",
        help=(
            "record every kernel specialisation the tests launch and compile each for these "
            "GPU targets at the end (gfx942,gfx90a,gfx1100,sm_90,sm_80; 'default' for those); "
            "fail the session if one cannot run there. Also [tool.portagpu] compile-for."
        ),
    )
    group.addoption(
        "--portagpu-compile-on-failure",
        dest="portagpu_compile_on_failure",
        default=None,
        choices=("fail", "warn"),
        help="fail the session (default) or only report kernels that cannot run",
    )
    group.addoption(
        "--portagpu-kernel-cache",
        dest="portagpu_kernel_cache",
        default=None,
        metavar="DIR",
        help="compile cache folder (default: the user cache folder, or $PORTAGPU_CACHE_DIR)",
    )
    group.addoption(
        "--portagpu-compile-report",
        dest="portagpu_compile_report",
        default=None,
        metavar="FILE",
        help="also write the check's report to FILE (.json or .sarif)",
    )


def _pyproject_settings(config: pytest.Config) -> tuple[dict[str, Any], str]:
    from portagpu._toml import portagpu_table
    from portagpu.errors import ConfigError

    try:  # the nearest to where pytest was started, as for `portagpu lint`
        table, path = portagpu_table(Path(config.invocation_params.dir))
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    return table, str(path or "")


def configure(config: pytest.Config) -> None:
    """Start recording when the session asks for the check."""
    from portagpu.errors import ConfigError

    table, where = _pyproject_settings(config)
    raw = config.getoption("portagpu_compile_for", default=None) or table.get("compile-for")
    if not raw:
        return
    from portagpu.kernelcheck.targets import DEFAULT_TARGETS, parse_targets

    if raw == "default" or raw == ["default"]:
        raw = list(DEFAULT_TARGETS)
    try:
        targets = parse_targets(
            raw,
            OPTION
            if config.getoption("portagpu_compile_for")
            else f"{where} [tool.portagpu] compile-for",
        )
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    mode = config.getoption("portagpu_compile_on_failure") or table.get(
        "compile-on-failure", "fail"
    )
    if mode not in ("fail", "warn"):
        raise pytest.UsageError(
            f"{where} [tool.portagpu] compile-on-failure: use 'fail' or 'warn', not {mode!r}"
        )
    cache_dir = config.getoption("portagpu_kernel_cache") or table.get("kernel-cache")
    if cache_dir and not config.getoption("portagpu_kernel_cache") and where:
        cache_dir = str(Path(where).parent / cache_dir)
    session = KernelcheckSession(
        config, targets, mode, cache_dir, config.getoption("portagpu_compile_report", default=None)
    )
    config.stash[STASH] = session
    config.pluginmanager.register(session, "portagpu-kernelcheck")


class KernelcheckSession:
    def __init__(
        self,
        config: pytest.Config,
        targets: tuple,
        mode: str,
        cache_dir: str | None,
        report_path: str | None,
    ) -> None:
        from portagpu.kernelcheck.record import Recorder

        self.config = config
        self.targets = targets
        self.mode = mode
        self.cache_dir = cache_dir
        self.report_path = report_path
        started = time.perf_counter()
        self.recorder = Recorder().start()
        self.start_seconds = time.perf_counter() - started
        self.report: Any = None
        self.error = ""
        self.is_worker = hasattr(config, "workerinput")  # a pytest-xdist worker
        self.from_workers: list[dict[str, Any]] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        self.recorder.origin = item.nodeid
        try:
            yield
        finally:
            self.recorder.origin = ""

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:  # pytest-xdist controller
        data = getattr(node, "workeroutput", {}).get(WORKER_KEY)
        if data:
            self.from_workers.append(json.loads(data))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.recorder.stop()
        if self.is_worker:
            self.config.workeroutput[WORKER_KEY] = json.dumps(self._recorded())
            return
        self._check()
        if self.report is None:
            return
        if self.report_path:
            from portagpu.kernelcheck.report import render

            fmt = "sarif" if self.report_path.endswith(".sarif") else "json"
            Path(self.report_path).write_text(render(self.report, fmt), encoding="utf-8")
        if self.report.failures and self.mode == "fail" and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _recorded(self) -> dict[str, Any]:
        return {
            "specs": [s.to_json() for s in self.recorder.specs],
            "cuda": [s.__dict__ for s in self.recorder.cuda_specs.values()],
            "problems": self.recorder.problems,
        }

    def _check(self) -> None:
        started = time.perf_counter()
        from portagpu.kernelcheck.cache import CompileCache
        from portagpu.kernelcheck.check import check_specs
        from portagpu.kernelcheck.cuda_check import CudaSpec, check_cuda_specs
        from portagpu.kernelcheck.spec import KernelSpec, SpecSet

        specs, cuda = SpecSet(), dict(self.recorder.cuda_specs)
        for spec in self.recorder.specs:
            specs.add(spec)
        problems = list(self.recorder.problems)
        for data in self.from_workers:
            for item in data["specs"]:
                specs.add(KernelSpec.from_json(item))
            for item in data["cuda"]:
                spec = CudaSpec(
                    **{
                        **item,
                        "options": tuple(item["options"]),
                        "block": tuple(item["block"]) if item["block"] else None,
                    }
                )
                cuda.setdefault(spec.identity(), spec)
            problems += [p for p in data["problems"] if p not in problems]
        cache = CompileCache(self.cache_dir) if self.cache_dir else CompileCache()
        try:
            report = check_specs(list(specs), list(self.targets), cache=cache)
            if cuda:
                from portagpu.kernelcheck.report import Report

                report = report.merge(
                    Report(
                        check_cuda_specs(list(cuda.values()), list(self.targets), cache=cache),
                        list(self.targets),
                    )
                )
        except Exception as exc:  # noqa: BLE001 - report it; the tests' own results stand
            self.error = f"{type(exc).__name__}: {exc}"
            return
        report.notes += problems
        report.timings = {
            "start": round(self.start_seconds, 3),
            "record": round(self.recorder.seconds, 3),
            "check": round(time.perf_counter() - started, 3),
        }
        self.report = report

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker:
            return
        names = ",".join(t.name for t in self.targets)
        terminalreporter.section(f"portagpu compile check for {names}")
        if self.error:
            terminalreporter.write_line(
                f"portagpu kernelcheck: the check failed to run: {self.error}"
            )
            return
        report = self.report
        if report is None or not report.checks:
            terminalreporter.write_line(
                "portagpu kernelcheck: no kernel was launched, nothing to check"
            )
            for note in report.notes if report else []:
                terminalreporter.write_line(note)
            return
        from portagpu.kernelcheck.report import format_table

        verbose = self.config.getoption("verbose", 0) > 0
        only_problems = not verbose and len(report.checks) > MAX_ROWS
        terminalreporter.write_line(format_table(report, only_problems=only_problems))
        if only_problems:
            terminalreporter.write_line(
                f"({len(report.checks)} checks; rows that fit are hidden: -v shows them)"
            )
        spent = report.timings
        terminalreporter.write_line(
            f"portagpu kernelcheck: the check added {sum(spent.values()):.2f} s to this session "
            f"(start {spent['start']:.2f} s, recording {spent['record']:.2f} s, checking {spent['check']:.2f} s)"
        )
        if report.failures:
            verb = (
                "fails the session"
                if self.mode == "fail"
                else "reported only (compile-on-failure = warn)"
            )
            terminalreporter.write_line(
                f"portagpu kernelcheck: {len(report.failures)} kernel specialisation(s) cannot run on a "
                f"requested target; {verb}",
                red=True,
            )
