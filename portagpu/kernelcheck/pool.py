"""Run compile jobs in worker processes (portagpu.kernelcheck.worker) and collect
their results; a worker that dies or overruns its time is named in the result of
the job it was on, and a fresh worker takes the jobs after it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

JOB_TIMEOUT_S = 600.0  # one specialisation for one target; big tl.dot tiles take ~10 s
POLL_S = 0.05


class _Worker:
    def __init__(
        self, jobs: list[dict[str, Any]], folder: Path, number: int, env: dict[str, str]
    ) -> None:
        self.jobs = jobs
        self.jobs_path = folder / f"jobs-{number}.json"
        self.results_path = folder / f"results-{number}.jsonl"
        self.results_path.write_text("")
        self.jobs_path.write_text(
            json.dumps({"sys_path": [p for p in sys.path if p], "jobs": jobs})
        )
        self.offset = 0
        self.current: str | None = None
        self.started_at = time.monotonic()
        self.stderr_path = folder / f"stderr-{number}.txt"
        with open(
            self.stderr_path, "wb"
        ) as stderr:  # a file, not a pipe: a chatty worker never blocks
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "portagpu.kernelcheck.worker",
                    str(self.jobs_path),
                    str(self.results_path),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=env,
            )

    def stderr_tail(self) -> str:
        try:
            with open(self.stderr_path, "rb") as fh:
                fh.seek(max(0, os.path.getsize(self.stderr_path) - 4000))
                return fh.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def read(self) -> list[dict[str, Any]]:
        """New complete lines since the last read."""
        with open(self.results_path, encoding="utf-8") as fh:
            fh.seek(self.offset)
            text = fh.read()
        complete = text[: text.rfind("\n") + 1]
        self.offset += len(complete.encode("utf-8"))
        events = []
        for line in complete.splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events


def worker_env(triton_cache_dir: str | None = None) -> dict[str, str]:
    """The worker's environment: ours, with Triton's compiler (not its interpreter)."""
    env = dict(os.environ)
    env["TRITON_INTERPRET"] = "0"
    if triton_cache_dir:
        env["TRITON_CACHE_DIR"] = triton_cache_dir
    return env


def run_jobs(
    jobs: list[dict[str, Any]],
    *,
    workers: int = 2,
    timeout: float = JOB_TIMEOUT_S,
    triton_cache_dir: str | None = None,
    on_result: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Facts per job id. Jobs of one kernel file go to one worker (one import each)."""
    results: dict[str, dict[str, Any]] = {}
    if not jobs:
        return results
    env = worker_env(triton_cache_dir)
    shards = _shards(jobs, max(1, min(workers, len(jobs))))
    with tempfile.TemporaryDirectory(prefix="portagpu-kernelcheck-") as tmp:
        folder = Path(tmp)
        count = 0
        running: list[_Worker] = []
        for shard in shards:
            running.append(_Worker(shard, folder, count, env))
            count += 1
        while running:
            time.sleep(POLL_S)
            for worker in list(running):
                for event in worker.read():
                    if event.get("event") == "start":
                        worker.current, worker.started_at = event["id"], time.monotonic()
                    elif event.get("event") == "done":
                        results[event["id"]] = event["facts"]
                        worker.current = None
                        if on_result is not None:
                            on_result(event["id"], event["facts"])
                finished = worker.process.poll() is not None
                overdue = (
                    worker.current is not None and time.monotonic() - worker.started_at > timeout
                )
                if not finished and not overdue:
                    continue
                if overdue:
                    worker.process.kill()
                    worker.process.wait()
                    for event in worker.read():  # a result written just before the kill
                        if event.get("event") == "done":
                            results[event["id"]] = event["facts"]
                stderr = worker.stderr_tail()
                running.remove(worker)
                left = [job for job in worker.jobs if job["id"] not in results]
                if not left:
                    continue
                culprit = worker.current if worker.current in {j["id"] for j in left} else None
                if culprit is None and worker.process.returncode not in (0, None):
                    # died before its first "start": the worker itself cannot run here
                    for job in left:
                        results[job["id"]] = {
                            "not_checkable": _died("the compile process", worker, stderr)
                        }
                    continue
                if culprit is not None:
                    results[culprit] = (
                        {
                            "compiled": False,
                            "error_type": "Timeout",
                            "droppable": False,
                            "error": f"compiling took longer than {timeout:.0f} s",
                            "transient": True,
                        }
                        if overdue
                        else {
                            "compiled": False,
                            "error_type": "CompilerCrash",
                            "droppable": False,
                            "error": _died("the compiler", worker, stderr),
                            "transient": True,
                        }
                    )
                    if on_result is not None:
                        on_result(culprit, results[culprit])
                rest = [job for job in left if job["id"] != culprit]
                if rest:
                    running.append(_Worker(rest, folder, count, env))
                    count += 1
    return results


def _died(what: str, worker: _Worker, stderr: str) -> str:
    code = worker.process.returncode
    how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
    tail = [line for line in stderr.strip().splitlines() if line.strip()][-1:] or [""]
    return f"{what} died ({how}){': ' + tail[0][:300] if tail[0] else ''}"


def _shards(jobs: list[dict[str, Any]], count: int) -> list[list[dict[str, Any]]]:
    """Split jobs into `count` lists of similar size, keeping each file's jobs together
    where that does not leave a worker idle."""
    by_file: dict[str, list[dict[str, Any]]] = {}
    for job in jobs:
        by_file.setdefault(job["kernel"]["file"], []).append(job)
    groups = sorted(by_file.values(), key=len, reverse=True)
    if len(groups) < count:  # too few files: split the big ones
        flat = [job for group in groups for job in group]
        return [flat[i::count] for i in range(count) if flat[i::count]]
    shards: list[list[dict[str, Any]]] = [[] for _ in range(count)]
    for group in groups:
        min(shards, key=len).extend(group)
    return [shard for shard in shards if shard]
