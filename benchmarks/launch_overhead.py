"""Host cost per launch and vector-add throughput: portagpu.launch vs native.

Side by side in one run (rounds interleaved so every variant sees the same
machine state):
  * host cost per launch of a tiny kernel (n = 1024, no sync in the loop):
    native Triton kernel[grid](...), native CuPy RawKernel(...), torch.add,
    and portagpu.launch on the same Triton kernel and the same CUDA source
    (with CuPy arrays, and with torch tensors);
  * vector add GB/s at 2^28 floats (bytes read + written), portagpu vs native.

Also the floors (Triton's compiled launcher called directly, with tensors as
Triton passes them; its C launcher with addresses; CuPy's Function) and
portagpu's own share: the same paths with the final launch swapped for a
no-op, and the two pieces the issue asks about, timed from the generated
code itself: building the cache key, and checking for launch hooks.

Targets (issues 5 and 15): Triton path <= 0.5x native Triton and within 1 us of
calling the compiled launcher directly; CUDA-source path <= native RawKernel
+ 1 us with CuPy arrays and with torch tensors; throughput >= 95% of native.
Writes benchmarks/results/launch_overhead.{json,md} (--label adds a suffix).
Needs a CUDA GPU with triton and cupy; --quick for a short smoke run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import timeit
from contextlib import contextmanager
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


@contextmanager
def driver_launches_off():
    """Launch code generated inside is Triton's launcher's (runtime/driver_launch.py)."""
    from portagpu.runtime import driver_launch

    os.environ[driver_launch.ENV_SWITCH] = "0"
    try:
        yield
    finally:
        del os.environ[driver_launch.ENV_SWITCH]


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


def generated_line(source: str, prefix: str) -> str:
    """The first line of generated launch code that starts with `prefix`, unindented."""
    return next(line.strip() for line in source.splitlines() if line.strip().startswith(prefix))


def statement_us(statement: str, scope: dict, number: int = 20000) -> float:
    """us per execution of `statement` in `scope` (best of 7, an empty statement subtracted)."""
    best = min(timeit.Timer(statement, globals=scope).repeat(7, number)) / number
    empty = min(timeit.Timer("pass", globals=scope).repeat(7, number)) / number
    return round((best - empty) * 1e6, 3)


def own_work(launcher, prepared, calls: int, rounds: int, triton_call, triton_args: tuple,
             cuda_calls: dict, bound_launches: dict) -> dict[str, float]:
    """portagpu's share: the launch paths with the final launch swapped for a no-op,
    and the key and hook checks of the generated Triton code timed alone."""
    def no_op(*args):
        return None

    out: dict[str, float] = {}
    generated = [f.__globals__ for f in launcher.shapes.values() if hasattr(f, "source")]
    generated += [bound.__globals__ for bound in bound_launches.values() if hasattr(bound, "source")]
    # every cache the generated code reads (prepared launches may have a launcher of their own)
    caches = {id(c): c for c in [launcher.cache, *(g["cache_get"].__self__ for g in generated)]}
    saved_entries = {key: dict(cache) for key, cache in caches.items()}

    def forget_hot_entries() -> None:  # generated code keeps its last hit's entry
        for scope in generated:
            scope["HOT"] = scope["HOT_ENTRY"] = None
            if "HOT_PREPARED" in scope:
                scope["HOT_PREPARED"] = None

    for cache in caches.values():  # the generated code then calls `run`: make it a no-op
        for key, entry in list(cache.items()):
            cache[key] = (no_op, *entry[1:5], None, None, None)
    drive_names = ("drive", "drive_grid")
    drives = {(id(scope), name): scope[name] for scope in generated for name in drive_names if name in scope}
    for scope in generated:  # ... and the driver launches (they report "launched")
        for name in drive_names:
            if name in scope:
                scope[name] = lambda *args: True
    forget_hot_entries()
    out["triton: portagpu.launch, compiled launcher a no-op"] = host_cost_us({"x": triton_call}, calls, rounds)["x"]
    for name, bound in bound_launches.items():
        out[f"triton: {name}, compiled launcher a no-op"] = host_cost_us(
            {"x": lambda bound=bound: bound(*triton_args[:3])}, calls, rounds)["x"]
    for key, cache in caches.items():
        cache.update(saved_entries[key])
    for (scope_id, name), drive in drives.items():
        next(scope for scope in generated if id(scope) == scope_id)[name] = drive
    forget_hot_entries()
    # CuPy's 1-D launch too, where the generated code uses it (older portagpu: no such slot)
    linear = hasattr(prepared, "linear")
    saved = prepared.call, getattr(prepared, "linear", None)
    prepared.call = no_op
    if linear:
        prepared.linear = None if saved[1] is None else no_op
    for name, fn in cuda_calls.items():
        out[f"{name}, CuPy launch a no-op"] = host_cost_us({"x": fn}, calls, rounds)["x"]
    prepared.call = saved[0]
    if linear:
        prepared.linear = saved[1]
    # the generated code's own lines, evaluated in a scope like the one they run in
    source = launcher.shapes[4].source
    x, y, out_t, n = triton_args
    scope = {"TAG": object(), "dev": 0, "nw": None, "p0": x, "p1": y, "p2": out_t, "p3": n, "p4": 1024,
             "a0": x.data_ptr(), "a1": y.data_ptr(), "a2": out_t.data_ptr()}
    scope.update(launcher.shapes[4].__globals__)
    key_lines = generated_line(source, "key = (")
    out["triton: building the key (generated lines, data_ptr() read before)"] = statement_us(key_lines, scope)
    out["triton: reading the three data_ptr()s"] = statement_us("p0.data_ptr(); p1.data_ptr(); p2.data_ptr()", scope)
    keyed: dict = {}
    exec(key_lines, scope, keyed)
    out["triton: key lookup in the cache"] = statement_us("cache_get(key)", {**scope, "key": keyed["key"]})
    out["triton: key compared with the last hit's"] = statement_us("key == hot", {"key": keyed["key"],
                                                                                   "hot": tuple(keyed["key"])})
    idle = generated_line(source, "if not ENTER.calls")[3:-1]
    out["triton: launch-hook check (generated test)"] = statement_us(idle, scope)
    out["triton: current device + stream"] = statement_us("get_stream(get_device())", scope)
    return out


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
    parser.add_argument("--label", default="", help="suffix of the result files")
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
    def triton_call() -> None:
        portagpu.launch(add_kernel, grid, x, y, out, n, BLOCK=1024)

    variants = {
        "triton native kernel[grid]": lambda: add_kernel[grid](x, y, out, n, BLOCK=1024),
        "triton portagpu.launch": triton_call,
        "cupy native RawKernel": lambda: raw(grid, (1024,), (xc, yc, oc, n32)),
        "cupy portagpu.launch (cupy arrays)": lambda: portagpu.launch(kernel, grid, xc, yc, oc, n,
                                                                      block=(1024,)),
        "cupy portagpu.launch (torch tensors)": lambda: portagpu.launch(kernel, grid, x, y, out, n,
                                                                        block=(1024,)),
        "torch.add": lambda: torch.add(x, y, out=out),
    }
    # the same kernel with a launcher of its own whose launch code was made with
    # driver launches off: portagpu.launch through Triton's C launcher, side by side
    add_kernel_tl = triton.jit(add_kernel.fn)
    with driver_launches_off():
        portagpu.launch(add_kernel_tl, grid, x, y, out, n, BLOCK=1024)
    variants["triton portagpu.launch, Triton's launcher"] = lambda: portagpu.launch(
        add_kernel_tl, grid, x, y, out, n, BLOCK=1024)
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
    direct = None
    if launcher.fast and launcher.cache:
        run, function, packed, _, _, direct, coop, pdl = next(iter(launcher.cache.values()))
        stream = torch.cuda.current_stream().cuda_stream
        variants["floor: CompiledKernel.run direct"] = lambda: run(
            1, 1, 1, stream, function, packed, None, None, None, x, y, out, n, 1024)
        if direct is not None:
            px, py, po = x.data_ptr(), y.data_ptr(), out.data_ptr()
            variants["floor: Triton's C launcher direct, addresses"] = lambda: direct(
                1, 1, 1, stream, function, coop, pdl, None, None, packed, None, None, None, px, py, po, n, 1024)
    # what portagpu.kernels launches with: a launch prepared once (constants bound;
    # trusted: the key is the device and the alignment only)
    from portagpu.runtime.dispatch import prepare_launch

    bound_launches = {
        f"prepare_launch{' (trusted)' if trusted else ''}": prepare_launch(
            add_kernel, grid, (None, None, None, n), (0, 1, 2), None, {"BLOCK": 1024}, trusted=trusted)
        for trusted in (False, True)
    }
    # the same prepared launch through Triton's C launcher (driver launches off
    # while it is prepared): the side-by-side for driver_launch.py
    with driver_launches_off():
        bound_launches["prepare_launch (trusted), Triton's launcher"] = prepare_launch(
            add_kernel, grid, (None, None, None, n), (0, 1, 2), None, {"BLOCK": 1024}, trusted=True)
    for name, bound in bound_launches.items():
        out.fill_(float("nan"))
        bound(x, y, out)
        assert bool((out == x + y).all()), name
        variants[f"triton {name}"] = lambda bound=bound: bound(x, y, out)
    # the floor of a driver launch: driver_launch.c called with its prepared launch
    trusted = bound_launches["prepare_launch (trusted)"]
    trusted(x, y, out)  # a cache hit: the generated code keeps its prepared driver launch
    prepared = trusted.__globals__.get("HOT_PREPARED")
    if prepared is not None:
        drive, stream = trusted.__globals__["drive"], torch.cuda.current_stream().cuda_stream
        px, py, po = x.data_ptr(), y.data_ptr(), out.data_ptr()
        variants["floor: driver launch direct, addresses"] = lambda: drive(prepared, stream, px, py, po)
    # ... and the RawKernel that RawModule.get_function gives portagpu, called
    # as portagpu calls it (shared_mem= and stream= keywords, a list of arguments)
    cupy_function = kernel._prepared[xc.data.device_id].function
    args_c = [xc, yc, oc, n32]
    variants["floor: CuPy Function direct"] = lambda: cupy_function(
        (1, 1, 1), (1024, 1, 1), args_c, shared_mem=0, stream=None)
    host = host_cost_us(variants, calls, rounds)
    cuda_calls = {
        "cupy path, cupy arrays": lambda: portagpu.launch(kernel, grid, xc, yc, oc, n, block=(1024,)),
        "cupy path, torch tensors": lambda: portagpu.launch(kernel, grid, x, y, out, n, block=(1024,)),
    }
    own = own_work(launcher, kernel._prepared[xc.data.device_id], calls, rounds, triton_call, (x, y, out, n),
                   cuda_calls, bound_launches)
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
    triton_over_floor = host["triton portagpu.launch"] - host.get("floor: CompiledKernel.run direct", float("nan"))
    cupy_extra = host["cupy portagpu.launch (cupy arrays)"] - host["cupy native RawKernel"]
    torch_extra = host["cupy portagpu.launch (torch tensors)"] - host["cupy native RawKernel"]
    triton_tp = gbps["triton portagpu.launch"] / gbps["triton native kernel[grid]"]
    cupy_tp = gbps["cupy portagpu.launch (torch tensors)"] / gbps["cupy native RawKernel"]
    targets = {
        "triton host cost ratio (<= 0.5)": [round(triton_ratio, 3), triton_ratio <= 0.5],
        "triton us over CompiledKernel.run direct (<= 1.0)": [round(triton_over_floor, 2), triton_over_floor <= 1.0],
        "cupy extra host cost us, cupy arrays (<= 1.0)": [round(cupy_extra, 2), cupy_extra <= 1.0],
        "cupy extra host cost us, torch tensors (<= 1.0)": [round(torch_extra, 2), torch_extra <= 1.0],
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
        "triton_direct_c_launch": direct is not None,
        "driver_launch": prepared is not None,
        "portagpu_own_work_us": own,
        "diagnostics_us": diagnostics,
    }
    lines = [f"# Launch overhead on {device.name} ({device.arch})", "",
             f"torch {torch.__version__}, triton {triton.__version__}, cupy {cupy.__version__}", "",
             "| variant | host us/launch (n=1024) | vector add GB/s (2^28) |", "|---|---:|---:|"]
    for name in variants:
        rate = gbps.get(name)
        lines.append(f"| {name} | {host[name]:.2f} | {'' if rate is None else f'{rate:.0f}'} |")
    lines += ["", "portagpu's own work (us/call):", "", "| piece | us |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in own.items()]
    lines += ["", "host work inside portagpu (us/call): "
              + ", ".join(f"{k} {v}" for k, v in diagnostics.items())]
    lines += ["", "| target | measured | met |", "|---|---:|---|"]
    lines += [f"| {k} | {v[0]} | {'yes' if v[1] else 'NO'} |" for k, v in targets.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    options.out.mkdir(parents=True, exist_ok=True)
    suffix = ("_quick" if options.quick else "") + (f"_{options.label}" if options.label else "")
    (options.out / f"launch_overhead{suffix}.json").write_text(json.dumps(result, indent=2) + "\n")
    (options.out / f"launch_overhead{suffix}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
