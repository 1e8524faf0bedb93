"""What the launcher (torchrun, torch.distributed.run, a scheduler's
equivalent) told this process through its environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from portagpu.errors import DistributedError

# torchrun sets all of these for every worker
REQUIRED = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class LaunchEnv:
    rank: int
    local_rank: int
    world_size: int
    launched: bool  # False: a plain `python script.py`, one process, no rendezvous

    @classmethod
    def single(cls) -> LaunchEnv:
        return cls(rank=0, local_rank=0, world_size=1, launched=False)


def _int(env: Mapping[str, str], name: str) -> int:
    value = env[name]
    try:
        return int(value)
    except ValueError:
        raise DistributedError(f"{name}={value!r} is not an integer") from None


def read_launch_env(environ: Mapping[str, str] | None = None) -> LaunchEnv:
    """The ranks of this process. With none of RANK/WORLD_SIZE/LOCAL_RANK set
    it is a single process; with some set, every variable torchrun sets must be."""
    env = os.environ if environ is None else environ
    if not any(name in env for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK")):
        return LaunchEnv.single()
    missing = [name for name in REQUIRED if not env.get(name)]
    if missing:
        given = ", ".join(f"{n}={env[n]}" for n in REQUIRED if env.get(n))
        raise DistributedError(
            f"launch environment incomplete: {', '.join(missing)} not set ({given}); "
            "start the script with `torchrun --nproc-per-node N script.py`, which sets "
            + ", ".join(REQUIRED)
        )
    rank, local_rank, world = _int(env, "RANK"), _int(env, "LOCAL_RANK"), _int(env, "WORLD_SIZE")
    _int(env, "MASTER_PORT")
    if not (world >= 1 and 0 <= rank < world and 0 <= local_rank < world):
        raise DistributedError(
            f"RANK={rank}, LOCAL_RANK={local_rank}, WORLD_SIZE={world} are inconsistent: "
            "need 0 <= RANK < WORLD_SIZE and 0 <= LOCAL_RANK < WORLD_SIZE"
        )
    return LaunchEnv(rank=rank, local_rank=local_rank, world_size=world, launched=True)
