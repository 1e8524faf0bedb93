import torch.distributed as dist


def start(rank, world):
    settings = {"backend": "nccl", "rank": rank, "world_size": world}
    dist.init_process_group(**settings)  # expect: PG801


def start_cpu(rank, world):
    settings = {"backend": "gloo", "rank": rank, "world_size": world}
    dist.init_process_group(**settings)
