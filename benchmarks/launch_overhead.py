"""Host cost per launch and vector-add throughput: portagpu.launch vs native.

Side by side in one run (rounds interleaved so every variant sees the same
machine state):
  * host cost per launch of a tiny kernel (n = 1024, no sync in the loop):
    native Triton kernel[grid](...), native CuPy RawKernel(...), torch.add,
    and portagpu.launch on the same Triton kernel and the same CUDA source
    (with CuPy arrays, and with torch tensors);
  * vector add GB/s at 2^28 floats (bytes read + written), portagpu vs native.

Targets (issue 5): Triton path <= 0.5x native Triton; CuPy path <= native + 1 us;
throughput >= 95% of native. Writes benchmarks/results/launch_overhead.{json,md}.
Needs a CUDA GPU with triton and cupy; --quick for a short smoke run.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import triton
import triton.language as tl

import portagpu

RESULTS = Path(__file__).with_name("results")
ADD_SOURCE = r"""
extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}
"""


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


def host_cost_us(variants: dict, calls: int, rounds: int) -> dict[str, float]:
    """Median over rounds of the mean host time per call, in microseconds."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for fn in variants.values():  # warm up: compile, fill caches
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    for _ in range(rounds):
        for name, fn in variants.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - start) / calls * 1e6)
            torch.cuda.synchronize()
    return {name: statistics.median(values) for name, values in samples.items()}


def device_time_ms(fn, iterations: int) -> float:
    """Median GPU time of one call, from CUDA events."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(iterations):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke test)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    options = parser.parse_args()
    if not torch.cuda.is_available():
        print("launch_overhead: needs a CUDA GPU (no result written)")
        return 0
    import cupy

    calls, rounds, iters = (200, 3, 5) if options.quick else (2000, 9, 20)
    device = portagpu.detect()

    # --- host cost per tiny launch -----------------------------------------
    n = 1024
    x, y, out = (torch.rand(n, device="cuda") for _ in range(3))
    xc, yc, oc = (cupy.random.rand(n, dtype=cupy.float32) for _ in range(3))
    raw = cupy.RawKernel(ADD_SOURCE, "add")
    kernel = portagpu.CudaKernel(ADD_SOURCE, "add")
    grid = (1,)
    n32 = np.int32(n)
    variants = {
        "triton native kernel[grid]": lambda: add_kernel[grid](x, y, out, n, BLOCK=1024),
        "triton portagpu.launch": lambda: portagpu.launch(add_kernel, grid, x, y, out, n, BLOCK=1024),
        "cupy native RawKernel": lambda: raw(grid, (1024,), (xc, yc, oc, n32)),
        "cupy portagpu.launch (cupy arrays)": lambda: portagpu.launch(kernel, grid, xc, yc, oc, n,
                                                                      block=(1024,)),
        "cupy portagpu.launch (torch tensors)": lambda: portagpu.launch(kernel, grid, x, y, out, n,
                                                                        block=(1024,)),
        "torch.add": lambda: torch.add(x, y, out=out),
    }
    for name, fn in variants.items():  # every variant computes the right thing
        out.fill_(float("nan"))
        oc.fill(float("nan"))
        fn()
        result = oc if "cupy arrays" in name or name == "cupy native RawKernel" else out
        expected = xc + yc if result is oc else x + y
        assert bool((result == expected).all()), name
    # the floor: Triton's compiled launcher called with everything precomputed
    from portagpu.runtime import dispatch

    variants["triton portagpu.launch"]()
    launcher = dispatch.triton_launcher(add_kernel)
    if launcher.fast and launcher.cache:
        run, function, packed = next(iter(launcher.cache.values()))[:3]
        stream = torch.cuda.current_stream().cuda_stream
        variants["floor: CompiledKernel.run direct"] = lambda: run(
            1, 1, 1, stream, function, packed, None, None, None, x, y, out, n, 1024)
    # ... and the RawKernel that RawModule.get_function gives portagpu, called
    # as portagpu calls it (shared_mem= and stream= keywords, a list of arguments)
    cupy_function = kernel._prepared[xc.data.device_id].function
    args_c = [xc, yc, oc, n32]
    variants["floor: CuPy Function direct"] = lambda: cupy_function(
        (1, 1, 1), (1024, 1, 1), args_c, shared_mem=0, stream=None)
    host = host_cost_us(variants, calls, rounds)
    # where portagpu's own time goes (pure host work, no launch)
    from portagpu.device import detect

    pieces = {"portagpu.detect()": detect, "runtime current_device()": dispatch.current_device,
              "torch current raw stream": lambda: torch._C._cuda_getCurrentRawStream(0)}
    diagnostics = {}
    for name, fn in pieces.items():
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        diagnostics[name] = round((time.perf_counter() - start) / calls * 1e6, 3)

    # --- vector add throughput at 2^28 floats ---------------------------------
    big = 1 << 28
    bx, by, bout = (torch.rand(big, device="cuda") for _ in range(3))
    block = 1024
    bgrid = (triton.cdiv(big, block),)
    cgrid = (triton.cdiv(big, 256),)
    nbig = np.int32(big)
    bxc, byc, boutc = (cupy.from_dlpack(t) for t in (bx, by, bout))
    throughput_variants = {
        "triton native kernel[grid]": lambda: add_kernel[bgrid](bx, by, bout, big, BLOCK=block),
        "triton portagpu.launch": lambda: portagpu.launch(add_kernel, bgrid, bx, by, bout, big,
                                                          BLOCK=block),
        "cupy native RawKernel": lambda: raw(cgrid, (256,), (bxc, byc, boutc, nbig)),
        "cupy portagpu.launch (torch tensors)": lambda: portagpu.launch(kernel, cgrid, bx, by, bout, big,
                                                                        block=(256,)),
        "torch.add": lambda: torch.add(bx, by, out=bout),
    }
    bytes_moved = 3 * 4 * big
    gbps = {}
    for name, fn in throughput_variants.items():
        bout.fill_(float("nan"))
        ms = device_time_ms(fn, iters)
        torch.testing.assert_close(bout, bx + by)
        gbps[name] = bytes_moved / (ms * 1e-3) / 1e9

    triton_ratio = host["triton portagpu.launch"] / host["triton native kernel[grid]"]
    cupy_extra = host["cupy portagpu.launch (cupy arrays)"] - host["cupy native RawKernel"]
    triton_tp = gbps["triton portagpu.launch"] / gbps["triton native kernel[grid]"]
    cupy_tp = gbps["cupy portagpu.launch (torch tensors)"] / gbps["cupy native RawKernel"]
    targets = {
        "triton host cost ratio (<= 0.5)": [round(triton_ratio, 3), triton_ratio <= 0.5],
        "cupy extra host cost us (<= 1.0)": [round(cupy_extra, 2), cupy_extra <= 1.0],
        "triton throughput ratio (>= 0.95)": [round(triton_tp, 3), triton_tp >= 0.95],
        "cupy throughput ratio (>= 0.95)": [round(cupy_tp, 3), cupy_tp >= 0.95],
    }
    result = {
        "device": device.name, "arch": device.arch,
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "triton": triton.__version__, "cupy": cupy.__version__},
        "settings": {"tiny_n": n, "calls_per_round": calls, "rounds": rounds,
                     "throughput_n": big, "throughput_iterations": iters, "quick": options.quick},
        "host_cost_us": {k: round(v, 2) for k, v in host.items()},
        "vector_add_gbps": {k: round(v, 1) for k, v in gbps.items()},
        "targets": targets,
        "diagnostics_us": diagnostics,
    }
    lines = [f"# Launch overhead on {device.name} ({device.arch})", "",
             f"torch {torch.__version__}, triton {triton.__version__}, cupy {cupy.__version__}", "",
             "| variant | host us/launch (n=1024) | vector add GB/s (2^28) |", "|---|---:|---:|"]
    for name in variants:
        rate = gbps.get(name)
        lines.append(f"| {name} | {host[name]:.2f} | {'' if rate is None else f'{rate:.0f}'} |")
    lines += ["", "host work inside portagpu (us/call): "
              + ", ".join(f"{k} {v}" for k, v in diagnostics.items())]
    lines += ["", "| target | measured | met |", "|---|---:|---|"]
    lines += [f"| {k} | {v[0]} | {'yes' if v[1] else 'NO'} |" for k, v in targets.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    options.out.mkdir(parents=True, exist_ok=True)
    suffix = "_quick" if options.quick else ""
    (options.out / f"launch_overhead{suffix}.json").write_text(json.dumps(result, indent=2) + "\n")
    (options.out / f"launch_overhead{suffix}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
