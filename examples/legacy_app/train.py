"""A small training script written for NVIDIA only, as many are: the input the
quickstart lints. Every CUDA-ism here is deliberate; see `portagpu lint` output."""

import subprocess

import cupy as cp
import pynvml
import torch

# A warp-32 row reduction: on a 64-wide AMD wavefront the mask, the shuffle start
# and the lane test all silently give wrong sums.
ROW_SUM = r"""
extern "C" __global__ void row_sum(const float* x, float* out, int n) {
    float v = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) v += x[blockIdx.x * n + i];
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(&out[blockIdx.x], v);
}
"""
row_sum = cp.RawKernel(ROW_SUM, "row_sum")


def gpu_power_watts() -> float:
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    return pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0


def gpu_names() -> str:
    return subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv"]).decode()


def train_step(model, batch, optimizer):
    model = model.cuda()
    batch = batch.to("cuda")
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast():
        loss = model(batch).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    torch.cuda.synchronize()
    return loss.item()
