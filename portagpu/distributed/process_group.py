"""`init()` and `shutdown()`: torch.distributed's process group, started
with the device and backend right for this rank's vendor.

The vendor facts (backend name, collective library, one device per rank,
visible-device variables) come from the backend objects in
portagpu/backends; this module only combines them with the launch
environment and torch's own defaults.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from datetime import timedelta
from types import ModuleType
from typing import Any

from portagpu.device import Device, bind, devices
from portagpu.distributed.launch_env import LaunchEnv, read_launch_env
from portagpu.errors import DistributedError


@dataclass(frozen=True)
class RankInfo:
    """What `init()` set up for this process."""

    rank: int
    local_rank: int
    world_size: int
    device: Device  # this rank's device; portagpu.detect() returns it from now on
    backend: str  # torch.distributed backend: "nccl" (NCCL or RCCL), "gloo", ...
    collective_library: str  # "NCCL", "RCCL", "Gloo", ...

    @property
    def torch_device(self) -> str:
        """Where this rank's tensors go: "cuda:1", "cpu" (ROCm devices are "cuda" in torch)."""
        return self.device.torch_device

    @property
    def is_main(self) -> bool:
        return self.rank == 0


_state: RankInfo | None = None
_owned = False  # portagpu created the process group, so shutdown() destroys it


def current() -> RankInfo | None:
    """The record of the last `init()`, or None before it (or after `shutdown()`)."""
    return _state


def _torch_distributed() -> tuple[ModuleType, ModuleType]:
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        raise DistributedError(f"portagpu.distributed needs torch: {exc}") from None
    if not dist.is_available():
        raise DistributedError(f"this torch build ({torch.__version__}) has no torch.distributed")
    return torch, dist


def _vendor(device: Device):  # -> Backend
    from portagpu.backends import backend_for

    return backend_for(device)


def rank_device(launch: LaunchEnv, requested: str | None) -> Device:
    """This rank's device: the LOCAL_RANK-th of `portagpu.devices()` where each
    rank binds one GPU; the shared CPU otherwise."""
    found = devices()
    first = found[0]
    vendor = _vendor(first)
    if not vendor.device_per_rank:
        if vendor.collective_library is None and launch.world_size > 1:
            if requested != "gloo":
                raise DistributedError(
                    f"{vendor.display_name} has no collective library: torch.distributed cannot "
                    f"run {launch.world_size} ranks on it (DDP and FSDP refuse its tensors). "
                    'Pass backend="gloo" to run every rank on the CPU, or run one process'
                )
            from portagpu.backends import all_backends

            host = next(b for b in all_backends() if not b.is_gpu)  # the CPU backend
            return host.probe(force=True)[0]
        return first
    if launch.local_rank < len(found):
        return found[launch.local_rank]
    from portagpu.visibility import masked

    if len(found) == 1 and masked(first.backend):
        return first  # the launcher gave each process its own GPU through the mask
    shown = ", ".join(d.torch_device for d in found)
    raise DistributedError(
        f"LOCAL_RANK={launch.local_rank}, but this process sees {len(found)} "
        f"{vendor.display_name} device(s) ({shown}): start at most {len(found)} processes "
        f"per node (torchrun --nproc-per-node {len(found)})"
    )


def _default_backend(dist: ModuleType, device: Device, vendor: Any) -> str:
    """torch's own choice for the device type where it has one, else the vendor's."""
    ask = getattr(dist, "get_default_backend_for_device", None)  # torch >= 2.6
    if ask is not None:
        try:
            return str(ask(vendor.torch_device_type))
        except (ValueError, RuntimeError):
            pass
    return vendor.dist_backend


def _available(dist: ModuleType, name: str) -> bool:
    check = getattr(dist, "is_backend_available", None)
    if check is not None:
        return bool(check(name))
    probe = getattr(dist, f"is_{name}_available", None)
    return bool(probe()) if probe is not None else True


def _library(name: str, vendor: Any) -> str:
    from portagpu.backends import all_backends

    if name == vendor.dist_backend and vendor.collective_library:
        return vendor.collective_library
    for other in all_backends():
        if other.dist_backend == name and other.collective_library:
            return other.collective_library
    return name.upper()


def choose_backend(dist: ModuleType, device: Device, requested: str | None) -> tuple[str, str]:
    """(torch.distributed backend, collective library) for tensors on `device`."""
    vendor = _vendor(device)
    name = requested or _default_backend(dist, device, vendor)
    if requested == "nccl" and vendor.dist_backend != "nccl":
        raise DistributedError(
            f'backend="nccl" needs an NVIDIA (NCCL) or AMD (RCCL) GPU, but this rank\'s device is '
            f"{device.torch_device} ({vendor.display_name}); leave backend unset and portagpu "
            f"picks {_default_backend(dist, device, vendor)!r}"
        )
    if not _available(dist, name):
        import torch

        raise DistributedError(
            f"this torch build ({torch.__version__}) has no {name!r} backend for "
            f"{device.torch_device}; install the {vendor.display_name} build of torch"
        )
    return name, _library(name, vendor)


def _set_torch_device(torch: ModuleType, device: Device) -> None:
    if hasattr(torch, "accelerator") and hasattr(torch.accelerator, "set_device_index"):
        torch.accelerator.set_device_index(device.index)  # torch >= 2.6
    else:
        torch.cuda.set_device(device.index)


def _timedelta(timeout: float | timedelta | None) -> timedelta | None:
    if timeout is None or isinstance(timeout, timedelta):
        return timeout
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise DistributedError(f"timeout must be positive seconds or a timedelta, not {timeout!r}")
    return timedelta(seconds=timeout)


def _existing_backend(dist: ModuleType, device: Device) -> str:
    """The running group's backend for this device type ("cpu:gloo,cuda:nccl" -> "nccl")."""
    name = str(dist.get_backend()).lower()
    if ":" not in name:
        return name
    kind = _vendor(device).torch_device_type
    pairs = dict(part.split(":", 1) for part in name.split(",") if ":" in part)
    return pairs.get(kind, next(iter(pairs.values())))


def init(backend: str | None = None, timeout: float | timedelta | None = None) -> RankInfo:
    """Start torch.distributed for this process, the vendor part handled.

    Reads RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun
    sets them; without them this is one process of a world of one), picks
    this rank's device from `portagpu.devices()` and makes it torch's and
    portagpu's current device, then calls `torch.distributed.init_process_group`
    with the backend for the vendor (NCCL on NVIDIA, RCCL through "nccl" on
    ROCm, gloo on CPU) and `device_id=` where torch takes it. `backend`
    overrides the choice; `timeout` is seconds or a timedelta.

    Idempotent: a second call returns the same record (a different `backend`
    is an error). A process group someone else started is adopted, not
    restarted. Raises DistributedError with the fix in its message.
    """
    global _state, _owned
    requested = backend.lower() if backend else None
    if _state is not None:
        if requested not in (None, _state.backend):
            raise DistributedError(
                f"torch.distributed already runs with {_state.backend!r}; call "
                f"portagpu.distributed.shutdown() before init(backend={backend!r})"
            )
        return _state
    wait = _timedelta(timeout)
    launch = read_launch_env()
    torch, dist = _torch_distributed()
    adopted = dist.is_initialized()
    if adopted:
        launch = LaunchEnv(dist.get_rank(), launch.local_rank, dist.get_world_size(), True)
    device = rank_device(launch, requested)
    if adopted:
        running = _existing_backend(dist, device)
        if requested not in (None, running):
            raise DistributedError(
                f"torch.distributed was started elsewhere with {running!r}, not {requested!r}"
            )
        requested = running
    name, library = choose_backend(dist, device, requested)
    vendor = _vendor(device)
    if vendor.device_per_rank:
        _set_torch_device(torch, device)
    if not adopted:
        options: dict[str, Any] = {"backend": name}
        if wait is not None:
            options["timeout"] = wait
        if launch.launched:
            options.update(init_method="env://", rank=launch.rank, world_size=launch.world_size)
        else:  # one process: an in-memory store, no port to pick
            options.update(store=dist.HashStore(), rank=0, world_size=1)
        takes_device_id = "device_id" in inspect.signature(dist.init_process_group).parameters
        if vendor.device_per_rank and name == vendor.dist_backend and takes_device_id:
            options["device_id"] = torch.device(device.torch_device)  # binds NCCL/RCCL eagerly
        dist.init_process_group(**options)
    bind(device)
    _owned = not adopted
    _state = RankInfo(launch.rank, launch.local_rank, launch.world_size, device, name, library)
    return _state


def shutdown() -> None:
    """Destroy the process group `init()` started (one adopted is left running)
    and forget the rank's device. Safe to call more than once."""
    global _state, _owned
    if _state is None:
        return
    dist = sys.modules.get("torch.distributed")
    try:
        if _owned and dist is not None and dist.is_initialized():
            dist.destroy_process_group()
    finally:
        bind(None)
        _state, _owned = None, False
