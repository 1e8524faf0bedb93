"""portagpu.matmul vs torch.matmul: bf16 8192^3 (TFLOP/s), side by side in one run.

Target (issue 5): portagpu.matmul within 2% of torch.matmul. Also reports which
library served the call (portagpu.last_backend()) and, when CuPy is present,
fp16 through CuPy. Writes benchmarks/results/matmul.{json,md}. Needs a GPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch

import portagpu

RESULTS = Path(__file__).with_name("results")


BATCH = 10  # calls per timing, back to back, as a training loop issues them


def batch_ms(fn, iterations: int) -> list[float]:
    """GPU time per call, each sample the mean over BATCH back-to-back calls
    (host work overlaps the previous GEMM, as it does in real use)."""
    times = []
    for _ in range(iterations):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(BATCH):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / BATCH)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--out", type=Path, default=RESULTS)
    options = parser.parse_args()
    if not torch.cuda.is_available():
        print("matmul: needs a GPU (no result written)")
        return 0
    size, iters = options.size, options.iterations
    flops = 2 * size**3
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
    variants = {
        "torch.matmul bf16": lambda: torch.matmul(a, b, out=out),
        "portagpu.matmul bf16 (torch)": lambda: portagpu.matmul(a, b, out=out),
    }
    try:
        import cupy

        ac, bc = cupy.from_dlpack(a.half()), cupy.from_dlpack(b.half())
        oc = cupy.empty((size, size), dtype=cupy.float16)
        variants["cupy.matmul fp16"] = lambda: cupy.matmul(ac, bc, out=oc)
        variants["portagpu.matmul fp16 (cupy)"] = lambda: portagpu.matmul(ac, bc, out=oc)
    except ImportError:
        pass
    for fn in variants.values():  # warm up (cuBLAS heuristics, clocks)
        for _ in range(5):
            fn()
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for round_ in range(iters):  # one batch each per round, order flipped every round,
        # so GPU clocks and heat drifting over the run treat every variant alike
        for name in names if round_ % 2 == 0 else reversed(names):
            samples[name] += batch_ms(variants[name], 1)
    tflops = {name: flops / (statistics.median(ms) * 1e-3) / 1e12 for name, ms in samples.items()}
    portagpu.matmul(a, b, out=out)
    library = str(portagpu.last_backend())
    ratio = tflops["portagpu.matmul bf16 (torch)"] / tflops["torch.matmul bf16"]
    device = portagpu.detect()
    result = {
        "device": device.name, "size": size, "iterations": iters, "batch": BATCH, "torch": torch.__version__,
        "tflops": {k: round(v, 1) for k, v in tflops.items()},
        "served_by": library,
        "targets": {"portagpu/torch bf16 ratio (>= 0.98)": [round(ratio, 4), ratio >= 0.98]},
    }
    lines = [f"# matmul {size}^3 on {device.name}", "", f"portagpu.matmul served by: {library}", "",
             "| variant | TFLOP/s |", "|---|---:|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in tflops.items()]
    lines += ["", f"portagpu/torch bf16 ratio: {ratio:.4f} (target >= 0.98: {'met' if ratio >= 0.98 else 'MISSED'})"]
    text = "\n".join(lines) + "\n"
    print(text)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "matmul.json").write_text(json.dumps(result, indent=2) + "\n")
    (options.out / "matmul.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
