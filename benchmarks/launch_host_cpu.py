"""portagpu.launch's own host work per call, measured on a machine with no GPU.

The GPU is simulated the way tests/runtime does it (a hand-built sm_90
`Device`): the Triton kernel is a real `JITFunction` whose compiled launcher
is a no-op, and CuPy is a stand-in whose kernel call is a no-op, so what is
left is portagpu's Python work -- the part issue 5's launch-overhead targets
are about. Each variant is set beside its floor (the same no-op called
directly with everything precomputed); the difference is portagpu's cost.

This is evidence for design choices, measured here before spending GPU time;
the H100 numbers from benchmarks/launch_overhead.py are the result.
Writes benchmarks/results/launch_host_cpu.{json,md} (or --out DIR, --label).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch
import triton.language as tl
from triton.runtime.jit import JITFunction

import portagpu

RESULTS = Path(__file__).with_name("results")
SOURCE = r"""
extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}
"""


def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # never compiled here
    pass


def no_op(*args, **kwargs) -> None:
    return None


class NoOpCompiled:
    """What Triton's dispatch returns: `run` is the compiled launcher."""

    def __init__(self) -> None:
        self.function, self.packed_metadata = 1, 2
        self.run = no_op

    def launch_metadata(self, *args):  # only called when launch hooks are set
        return None


class FakeArray:
    """cupy.ndarray as the runtime sees it: `_c_contiguous`, `.data.device_id`."""

    _c_contiguous = True  # a cdef attribute on the real class

    def __init__(self) -> None:
        self.data = types.SimpleNamespace(device_id=0)


def install_simulated_nvidia() -> None:
    """A simulated sm_90 device, a stand-in CuPy, and C builtins in place of
    torch's CUDA device/stream queries (their cost is of the same order)."""
    from portagpu.device import Device, clear_cache
    from portagpu.runtime import dispatch

    device = Device(vendor="nvidia", backend="cuda", index=0, name="simulated sm_90", arch="sm_90",
                    warp_size=32, multiprocessors=None, memory_total=None, blas="simulated",
                    source="benchmark")
    dispatch.detect = lambda: device
    clear_cache()
    torch._C._cuda_getDevice = int  # int() -> 0
    torch._C._cuda_getCurrentRawStream = abs  # abs(0) -> stream 0

    cupy = types.ModuleType("cupy")
    cupy.ndarray = FakeArray

    class Function:
        __call__ = staticmethod(no_op)

    class RawModule:
        def __init__(self, code: str, options: tuple = ()) -> None:
            pass

        def compile(self) -> None:
            pass

        def get_function(self, name: str) -> Function:
            return Function()

    class CudaDevice:
        def __init__(self, index: int) -> None:
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    cupy.RawModule = RawModule
    cupy.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(is_hip=False, getDevice=int),
                                      Device=CudaDevice)
    cupy.__version__ = "stand-in"
    sys.modules["cupy"] = cupy


def per_call_us(variants: dict, calls: int, rounds: int) -> dict[str, float]:
    """Fastest of the interleaved rounds, mean time per call (us). The minimum,
    not the median: this machine's cores are shared, and other work only ever
    adds time."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for fn in variants.values():
        for _ in range(100):
            fn()
    for _ in range(rounds):
        for name, fn in variants.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: min(values) for name, values in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--label", default="", help="suffix for the result files")
    options = parser.parse_args()
    install_simulated_nvidia()

    kernel = JITFunction(add_kernel)
    kernel.run = lambda *args, grid, warmup, **kwargs: NoOpCompiled()  # Triton's dispatch, stubbed
    x, y, out = (torch.zeros(1024) for _ in range(3))
    n, grid = 1024, (1,)
    cuda_kernel = portagpu.CudaKernel(SOURCE, "add")
    xc, yc, oc = FakeArray(), FakeArray(), FakeArray()
    launch = portagpu.launch
    launch(kernel, grid, x, y, out, n, BLOCK=1024)
    launch(cuda_kernel, grid, xc, yc, oc, n, block=(1024,))
    function = next(iter(cuda_kernel._prepared.values())).function
    args3 = [xc, yc, oc, np.int32(n)]
    variants = {
        "triton floor: launcher called directly": lambda: no_op(
            1, 1, 1, 0, 1, 2, None, None, None, x, y, out, n, 1024),
        "triton portagpu.launch": lambda: launch(kernel, grid, x, y, out, n, BLOCK=1024),
        "triton portagpu.launch, num_warps=4": lambda: launch(kernel, grid, x, y, out, n, BLOCK=1024,
                                                              num_warps=4),
        "cupy floor: kernel function called as portagpu calls it": lambda: function(
            (1, 1, 1), (1024, 1, 1), args3, shared_mem=0, stream=None),
        "cupy portagpu.launch": lambda: launch(cuda_kernel, grid, xc, yc, oc, n, block=(1024,)),
    }
    calls, rounds = (2000, 5) if options.quick else (20000, 15)
    host = per_call_us(variants, calls, rounds)
    overhead = {
        "triton": host["triton portagpu.launch"] - host["triton floor: launcher called directly"],
        "triton, num_warps=4": host["triton portagpu.launch, num_warps=4"]
        - host["triton floor: launcher called directly"],
        "cupy": host["cupy portagpu.launch"] - host["cupy floor: kernel function called as portagpu calls it"],
    }
    result = {
        "what": "portagpu.launch host work per call on a simulated sm_90 (no-op launchers), CPU only",
        "python": platform.python_version(), "machine": platform.machine(),
        "torch": torch.__version__, "calls_per_round": calls, "rounds": rounds,
        "per_call_us": {k: round(v, 3) for k, v in host.items()},
        "portagpu_overhead_us": {k: round(v, 3) for k, v in overhead.items()},
    }
    lines = ["# portagpu.launch host work per call (simulated sm_90, no-op launchers, this CPU)", "",
             "| variant | us/call |", "|---|---:|"]
    lines += [f"| {k} | {v:.3f} |" for k, v in host.items()]
    lines += ["", "| portagpu's own work | us/call |", "|---|---:|"]
    lines += [f"| {k} | {v:.3f} |" for k, v in overhead.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    options.out.mkdir(parents=True, exist_ok=True)
    stem = f"launch_host_cpu{'_' + options.label if options.label else ''}{'_quick' if options.quick else ''}"
    (options.out / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    (options.out / f"{stem}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
