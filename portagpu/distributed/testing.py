"""Run a function under N ranks, for tests: CI exercises the distributed
code path on the CPU with gloo, and a multi-GPU runner on its GPUs.

    from portagpu.distributed.testing import spawn

    def body(info, n):                  # module level: the children import it
        x = torch.full((n,), float(info.rank + 1), device=info.torch_device)
        torch.distributed.all_reduce(x)
        return x.tolist()

    def test_all_reduce():
        assert spawn(body, 2, 4) == [[3.0] * 4] * 2

Each child gets the variables torchrun would set (RANK, LOCAL_RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and PORTAGPU_DEVICE=`device`, calls
`portagpu.distributed.init()`, runs `fn(info, *args)` and shuts down. The
children are started with the "spawn" method (no fork of a process that may
hold a GPU context), so `fn` must be importable (a module-level function)
and its arguments and return value picklable.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pickle
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from portagpu.errors import PortagpuError
from portagpu.visibility import apply_env


class RankFailure(PortagpuError):
    """A rank raised, exited without a result, or ran past the timeout."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    """The children inherit os.environ when they start; the parent's own is
    put back as soon as they have."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        apply_env(os.environ, values)
        yield
    finally:
        apply_env(os.environ, saved)


def _function(where: tuple[str, str | None, str]) -> Callable[..., Any]:
    """The function `spawn` was given, found in the child: by module name, else
    from its file (pytest's importlib mode and scripts have modules that the
    child cannot import by name)."""
    module_name, path, qualname = where
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        if path is None:
            raise
        spec = importlib.util.spec_from_file_location(f"_portagpu_spawned_{module_name}", path)
        if spec is None or spec.loader is None:
            raise
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _child(
    where: tuple[str, str | None, str],
    args: tuple,
    rank: int,
    out: str,
    backend: str | None,
    timeout: float,
) -> None:
    os.environ["RANK"] = os.environ["LOCAL_RANK"] = str(rank)
    try:
        fn = _function(where)
        import portagpu.distributed as pgd

        info = pgd.init(backend=backend, timeout=timeout)
        try:
            outcome = ("ok", fn(info, *args))
        finally:
            pgd.shutdown()
    except BaseException:  # noqa: BLE001 - every failure goes back to the parent as text
        outcome = ("error", traceback.format_exc())
    with open(out, "wb") as f:
        pickle.dump(outcome, f)


def spawn(fn: Callable[..., Any], nprocs: int = 2, *args: Any, device: str | None = "cpu",
          backend: str | None = None, timeout: float = 120.0) -> list[Any]:  # fmt: skip
    """Run `fn(info, *args)` in `nprocs` ranks; returns their results by rank.

    `device`: PORTAGPU_DEVICE for the children ("cpu": gloo, no GPU needed;
    None: what they detect, e.g. one GPU per rank). `backend` is passed to
    `init()`. Raises RankFailure with the child's traceback if a rank fails.
    """
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    env = {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "WORLD_SIZE": str(nprocs),
        "PORTAGPU_DEVICE": device,
    }
    with tempfile.TemporaryDirectory(prefix="portagpu-spawn-") as folder:
        outs = [str(Path(folder, f"rank{rank}.pickle")) for rank in range(nprocs)]
        module = sys.modules.get(fn.__module__)
        where = (fn.__module__, getattr(module, "__file__", None), fn.__qualname__)
        procs = [
            context.Process(target=_child, args=(where, args, rank, outs[rank], backend, timeout))
            for rank in range(nprocs)
        ]
        with _environment(env):
            for proc in procs:
                proc.start()
        deadline = time.monotonic() + timeout + 60  # init's own timeout fires first
        try:
            for proc in procs:
                proc.join(max(0.0, deadline - time.monotonic()))
        finally:
            late = [rank for rank, proc in enumerate(procs) if proc.is_alive()]
            for proc in procs:
                if proc.is_alive():
                    proc.kill()
                    proc.join()
        if late:
            raise RankFailure(
                f"rank(s) {late} of {nprocs} still running after {timeout + 60:.0f} s"
            )
        return [_result(rank, procs[rank].exitcode, outs[rank]) for rank in range(nprocs)]


def _result(rank: int, exitcode: int | None, out: str) -> Any:
    if not os.path.exists(out):
        raise RankFailure(f"rank {rank} exited with code {exitcode} and no result")
    with open(out, "rb") as f:
        status, value = pickle.load(f)
    if status == "error":
        raise RankFailure(f"rank {rank} failed:\n{value}")
    return value
