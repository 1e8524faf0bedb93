"""A small GPT-style training script written the way many real ones are (lint sample)."""

import os
from contextlib import nullcontext

import torch
from torch.distributed import init_process_group

out_dir = "out"
backend = "nccl"
device = "cuda"  # expect: PG103
dtype = (
    "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"  # expect: PG111
)

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend=backend)  # expect: PG801
    local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{local_rank}"  # expect: PG103
    torch.cuda.set_device(device)  # expect: PG101

torch.manual_seed(1337)
torch.cuda.manual_seed(1337)  # a no-op without CUDA: not a finding
torch.backends.cuda.matmul.allow_tf32 = True  # harmless off CUDA
torch.backends.cudnn.allow_tf32 = True
device_type = "cuda" if "cuda" in device else "cpu"  # expect: PG110
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = (
    nullcontext()
    if device_type == "cpu"
    else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
)


def get_batch(data, block_size, batch_size):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i : i + block_size] for i in ix])
    if device_type == "cuda":
        x = x.pin_memory().to(device, non_blocking=True)
    return x


scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))  # expect: PG104


def report(step):
    torch.cuda.synchronize()  # expect: PG101
    used = torch.cuda.max_memory_allocated() / 2**30  # expect: PG108
    print(f"step {step}: {used:.1f} GiB")
    torch.cuda.empty_cache()  # a no-op without CUDA: not a finding
