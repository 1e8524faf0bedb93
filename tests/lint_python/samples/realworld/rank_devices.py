"""Multi-GPU helpers in the style of research training scripts (own code):
rank numbers used as devices, loops over the GPUs, negated device tests."""

import os

import torch
import torch.distributed as dist


def setup(local_rank: int) -> None:
    dist.init_process_group(backend="nccl")  # expect: PG801
    torch.cuda.set_device(local_rank)  # expect: PG802


def step(model, batch, local_rank: int):
    model = model.to(local_rank)  # expect: PG806
    noise = torch.randn(4, 8, device=local_rank)  # expect: PG806
    return model(batch.to(local_rank) + noise)  # expect: PG806


def gpu_names() -> list[str]:
    # runs once per GPU: no GPU, no iteration
    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def capabilities() -> list[tuple[int, int]]:
    found = []
    for index in range(torch.cuda.device_count()):
        found.append(torch.cuda.get_device_capability(index))
    return found


def all_on_gpu(buffers: dict) -> dict:
    moved = {}
    for name, buf in buffers.items():
        # the body runs exactly where the buffer is not on CUDA
        if buf.device != torch.device("cuda"):
            buf = buf.to(torch.device("cuda"))  # expect: PG103
        moved[name] = buf
    return moved


def warm_up(count: int) -> None:
    probe = torch.zeros(1)
    probe.to(f"cuda:{count}")  # expect: PG102


def pick(rank: int) -> torch.device:
    return torch.device(f"cuda:{rank}" if torch.cuda.is_available() else "cpu")  # expect: PG107


def wheel_tag() -> str:
    version = torch.version.cuda  # expect: PG112
    return "cu" + version.replace(".", "") + os.environ.get("SUFFIX", "")


def describe() -> str:
    return f"CUDA {torch.version.cuda}"
