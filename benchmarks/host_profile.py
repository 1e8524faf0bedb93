"""Where the host microseconds go: Triton launch, CudaKernel on torch tensors and
CuPy arrays, and one eager portagpu.kernels call (GPU machine).

    python benchmarks/host_profile.py [--out DIR]

Prints and writes host_profile.json (+ host_profile_cprofile.txt): the cost
of each step the launch paths take, measured alone in tight loops, and the
paths themselves with pieces swapped for no-ops. Diagnostic evidence for
design choices; the results that count are launch_overhead.py and
kernels_bench.py.
"""

# ruff: noqa: I001  (portagpu before triton)
from __future__ import annotations

import argparse
import cProfile
import functools
import inspect
import io
import json
import os
import pstats
import sys
from pathlib import Path
from typing import Any

import portagpu
import portagpu.kernels as K

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_overhead import ADD_SOURCE, add_kernel, host_cost_us, statement_us  # noqa: E402


def stmt_ns(stmt: str, env: dict[str, Any]) -> float:
    return round(statement_us(stmt, env) * 1000, 1)


def per_call_us(variants: dict[str, Any], calls: int = 2000, rounds: int = 7) -> dict[str, float]:
    return {k: round(v, 3) for k, v in host_cost_us(variants, calls, rounds).items()}


def closure_value(fn: Any, attribute: str) -> Any:
    """The first value in `fn`'s closure that has `attribute` (a plan's prepared launch)."""
    for cell in fn.__closure__ or ():
        if hasattr(cell.cell_contents, attribute):
            return cell.cell_contents
    raise LookupError(f"no closure value of {fn} has .{attribute}")


def source_of(obj: Any) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError) as exc:
        return f"<no source: {exc}>"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    options = parser.parse_args()
    import cupy

    result: dict[str, Any] = {
        "device": torch.cuda.get_device_name(),
        "versions": {
            "torch": torch.__version__,
            "triton": triton.__version__,
            "cupy": cupy.__version__,
            "python": sys.version.split()[0],
        },
    }
    facts: dict[str, str] = {}
    n = 1024
    x, y, out = (torch.rand(n, device="cuda") for _ in range(3))
    xc, yc, oc = (cupy.random.rand(n, dtype=cupy.float32) for _ in range(3))
    grid = (1,)

    # --- Triton -----------------------------------------------------------------------
    compiled = add_kernel[grid](x, y, out, n, BLOCK=1024)
    run = compiled.run
    facts["triton launcher class"] = f"{type(run).__module__}.{type(run).__qualname__}"
    facts["triton launcher __call__"] = source_of(type(run).__call__)
    facts["triton launcher attributes"] = repr(sorted(vars(run)))
    from triton import knobs

    facts["launch_enter_hook"] = repr(type(knobs.runtime.launch_enter_hook))
    facts["knobs.runtime class attr"] = repr(type(knobs.runtime).__dict__.get("launch_enter_hook"))
    portagpu.launch(add_kernel, grid, x, y, out, n, BLOCK=1024)
    from portagpu.runtime import dispatch

    launcher = dispatch.triton_launcher(add_kernel)
    fast = launcher.shapes.get(4)
    facts["generated triton launch"] = getattr(fast, "source", "<none>")
    key, entry = next(iter(launcher.cache.items()))
    function, packed = entry[1], entry[2]
    stream = torch.cuda.current_stream().cuda_stream
    px, py, po = x.data_ptr(), y.data_ptr(), out.data_ptr()
    triton_variants = {
        "native kernel[grid]": lambda: add_kernel[grid](x, y, out, n, BLOCK=1024),
        "portagpu.launch": lambda: portagpu.launch(add_kernel, grid, x, y, out, n, BLOCK=1024),
        "generated fast function called directly": lambda: fast(
            grid, (x, y, out, n), None, {"BLOCK": 1024}
        ),
        "floor: run(...) with tensors": lambda: run(
            1, 1, 1, stream, function, packed, None, None, None, x, y, out, n, 1024
        ),
        "floor: run(...) with int pointers": lambda: run(
            1, 1, 1, stream, function, packed, None, None, None, px, py, po, n, 1024
        ),
    }
    # the C launcher behind run (its argument list differs between Triton versions)
    c_launch = getattr(run, "launch", None)
    facts["run.launch"] = repr(c_launch)
    host = per_call_us(triton_variants)
    # portagpu's own work: the same path with the compiled launcher swapped for a no-op
    # (and the generated code's remembered last hit forgotten, so it looks the key up)
    launcher.cache[key] = (lambda *a: None, *entry[1:5], None, None, None)
    fast.__globals__["HOT"] = None
    host["portagpu.launch, launcher a no-op (portagpu's own work)"] = per_call_us(
        {"x": lambda: portagpu.launch(add_kernel, grid, x, y, out, n, BLOCK=1024)}
    )["x"]
    host["generated fast function, launcher a no-op"] = per_call_us(
        {"x": lambda: fast(grid, (x, y, out, n), None, {"BLOCK": 1024})}
    )["x"]
    launcher.cache[key] = entry
    fast.__globals__["HOT"] = None
    result["triton_host_us"] = host

    # --- micro costs (ns) -----------------------------------------------------------
    env = {
        "x": x,
        "torch": torch,
        "knobs": knobs,
        "rt": knobs.runtime,
        "launcher": launcher,
        "getdev": torch._C._cuda_getDevice,
        "getstream": torch._C._cuda_getCurrentRawStream,
        "cache_get": launcher.cache.get,
        "key": key,
        "xc": xc,
        "np": np,
        "cupy": cupy,
        "f": dispatch.launch,
        "y": y,
        "out": out,
        "n": n,
        "D": x.dtype,
        "dev": x.device,
        "template": torch.empty((), device="cuda").expand(4096),
        "contiguous4096": torch.empty(4096, device="cuda"),
        "maker": functools.partial(torch.empty_like, torch.empty((), device="cuda").expand(4096)),
        "hot": key,
        "SIZE": torch.Size([4096]),
        "aten_empty_like": torch.ops.aten.empty_like.default,
        "empty_like": torch.empty_like,
    }
    micro = {
        "t.data_ptr()": "x.data_ptr()",
        "t.dtype": "x.dtype",
        "t.is_cuda": "x.is_cuda",
        "t.is_contiguous()": "x.is_contiguous()",
        "t.get_device()": "x.get_device()",
        "t.device": "x.device",
        "t.shape": "x.shape",
        "t.stride()": "x.stride()",
        "t.dtype is D": "x.dtype is D",
        "torch._C._cuda_getDevice()": "getdev()",
        "torch._C._cuda_getCurrentRawStream(0)": "getstream(0)",
        "torch.cuda.current_stream()": "torch.cuda.current_stream()",
        "knobs.runtime.launch_enter_hook": "rt.launch_enter_hook",
        "key tuple (12 items) + dict get": "cache_get((0, None, x.dtype, x.data_ptr() & 15 == 0, y.dtype, "
        "y.data_ptr() & 15 == 0, out.dtype, out.data_ptr() & 15 == 0, "
        "n & 15 == 0, 1024, int))",
        "torch.empty_like(t)": "torch.empty_like(x)",
        "torch.empty_like(1-element template expanded to (4096,))": "torch.empty_like(template)",
        "torch.empty_like(contiguous (4096,))": "torch.empty_like(contiguous4096)",
        "functools.partial(torch.empty_like, template)()": "maker()",
        "t.new_empty(4096)": "x.new_empty(4096)",
        "t.new_empty((4096,))": "x.new_empty((4096,))",
        "torch.empty(4096, dtype=D, device=dev)": "torch.empty(4096, dtype=D, device=dev)",
        "key == hot (the generated code's last-hit test)": "key == hot",
        "torch.empty(shape, dtype, device)": "torch.empty((1024,), dtype=D, device=x.device)",
        "t.new_empty(shape)": "x.new_empty((1024,))",
        "t.contiguous()": "x.contiguous()",
        "t.view(-1)": "x.view(-1)",
        "cupy getDevice": "cupy.cuda.runtime.getDevice()",
        "xc._c_contiguous": "xc._c_contiguous",
        "xc.data.device_id": "xc.data.device_id",
        "np.int32(1024)": "np.int32(1024)",
        "os.environ.get": "__import__('os').environ.get('PORTAGPU_KERNELS_IMPL')",
        # output allocation: other torch calls for a new (4096,) fp32 tensor
        "empty_like(contiguous (4096,)) via a bound name": "empty_like(contiguous4096)",
        "torch.empty(4096, device=dev) (default dtype)": "torch.empty(4096, device=dev)",
        "torch.empty(4096, dtype=D, device=0)": "torch.empty(4096, dtype=D, device=0)",
        "torch.empty(torch.Size, dtype=D, device=dev)": "torch.empty(SIZE, dtype=D, device=dev)",
        "torch.empty_strided((4096,), (1,), dtype=D, device=dev)": "torch.empty_strided((4096,), (1,), dtype=D, device=dev)",
        "contiguous4096.new_empty(4096)": "contiguous4096.new_empty(4096)",
        "contiguous4096.new_empty(torch.Size)": "contiguous4096.new_empty(SIZE)",
        "torch.ops.aten.empty_like.default(contiguous (4096,))": "aten_empty_like(contiguous4096)",
        "torch.cuda.device_count()": "torch.cuda.device_count()",
    }
    result["micro_ns"] = {name: stmt_ns(stmt, env) for name, stmt in micro.items()}

    # --- CuPy / CudaKernel --------------------------------------------------------------
    raw = cupy.RawKernel(ADD_SOURCE, "add")  # noqa: PG699 - launch_overhead.py's literal, linted there
    kernel = portagpu.CudaKernel(ADD_SOURCE, "add")
    portagpu.launch(kernel, grid, x, y, out, n, block=(1024,))
    portagpu.launch(kernel, grid, xc, yc, oc, n, block=(1024,))
    facts["generated cuda launch"] = getattr(kernel._fast, "source", "<none>")
    prepared = kernel._prepared[0]
    cufn = prepared.function.kernel
    n32 = np.int32(n)
    cupy_variants = {
        "native RawKernel (cupy arrays)": lambda: raw(grid, (1024,), (xc, yc, oc, n32)),
        "Function positional (cupy arrays)": lambda: cufn(
            (1,), (1024,), (xc, yc, oc, n32), 0, None
        ),
        "Function positional (int pointers)": lambda: cufn(
            (1,), (1024,), (px, py, po, n32), 0, None
        ),
        "Function positional (np.uint64 pointers)": lambda: cufn(
            (1,), (1024,), (np.uint64(px), np.uint64(py), np.uint64(po), n32), 0, None
        ),
        "portagpu.launch (cupy arrays)": lambda: portagpu.launch(
            kernel, grid, xc, yc, oc, n, block=(1024,)
        ),
        "portagpu.launch (torch tensors)": lambda: portagpu.launch(
            kernel, grid, x, y, out, n, block=(1024,)
        ),
    }
    try:
        from cupy.cuda.function import CIntptr

        cx, cy, co = CIntptr(px), CIntptr(py), CIntptr(po)
        cupy_variants["Function positional (cached CIntptr pointers)"] = lambda: cufn(
            (1,), (1024,), (cx, cy, co, n32), 0, None
        )
        cupy_variants["Function positional (new CIntptr each call)"] = lambda: cufn(
            (1,),
            (1024,),
            (CIntptr(x.data_ptr()), CIntptr(y.data_ptr()), CIntptr(out.data_ptr()), n32),
            0,
            None,
        )
        facts["cupy CIntptr"] = "importable"
    except Exception as exc:  # noqa: BLE001
        facts["cupy CIntptr"] = f"not importable: {exc!r}"
    try:
        from cupy._core._scalar import CScalar

        cn = CScalar(1024, np.int32)
        cupy_variants["Function positional (cupy arrays, cached CScalar n)"] = lambda: cufn(
            (1,), (1024,), (xc, yc, oc, cn), 0, None
        )
        facts["cupy CScalar"] = "importable"
        # a 1-D launch through Function.linear_launch (typed size arguments) instead of __call__
        cupy_variants["Function positional (cached CIntptr pointers, cached CScalar n)"] = lambda: (
            cufn((1,), (1024,), (cx, cy, co, cn), 0, None)
        )
        cupy_variants["Function.linear_launch (cached CIntptr pointers, cached CScalar n)"] = (
            lambda: cufn.linear_launch(1024, (cx, cy, co, cn), 0, 1024, None)
        )
    except Exception as exc:  # noqa: BLE001
        facts["cupy CScalar"] = f"not importable: {exc!r}"
    host_c = per_call_us(cupy_variants)
    saved = prepared.call, prepared.linear
    prepared.call = lambda *a: None  # and CuPy's 1-D launch, where the generated code uses it
    prepared.linear = None if saved[1] is None else prepared.call
    host_c["portagpu.launch (torch tensors), CuPy call a no-op"] = per_call_us(
        {"x": lambda: portagpu.launch(kernel, grid, x, y, out, n, block=(1024,))}
    )["x"]
    host_c["portagpu.launch (cupy arrays), CuPy call a no-op"] = per_call_us(
        {"x": lambda: portagpu.launch(kernel, grid, xc, yc, oc, n, block=(1024,))}
    )["x"]
    prepared.call, prepared.linear = saved
    result["cupy_host_us"] = host_c

    # --- portagpu.kernels eager calls ---------------------------------------------------------
    rows, cols = 4096, 1024
    xs = torch.randn(rows, cols, device="cuda")
    xh = xs.half()
    w, b = (
        torch.randn(cols, device="cuda", dtype=torch.half),
        torch.randn(cols, device="cuda", dtype=torch.half),
    )
    wide = torch.randn(4096, 8192, device="cuda")
    kernel_variants = {
        "K.softmax 4096x8192": lambda: K.softmax(wide),
        "torch.softmax 4096x8192": lambda: torch.softmax(wide, -1),
        "K.softmax": lambda: K.softmax(xs),
        "torch.softmax": lambda: torch.softmax(xs, -1),
        "K.layer_norm fp16": lambda: K.layer_norm(xh, cols, w, b),
        "F.layer_norm fp16": lambda: F.layer_norm(xh, (cols,), w, b),
        "K.sum(dim=-1)": lambda: K.sum(xs, dim=-1),
        "torch.sum(dim=-1)": lambda: torch.sum(xs, -1),
        "K.add": lambda: K.add(xs, xs),
        "torch.add": lambda: torch.add(xs, xs),
    }
    # the pieces of one call: the plan called directly (no key, no lookup), and the
    # prepared launch the plan holds, on outputs allocated once
    K.sum(xs, dim=-1), K.softmax(xs), K.softmax(wide)
    sum_plan = next(iter(K.sum.plans.values()))
    softmax_plans = list(K.softmax.plans.values())
    values, probs, wide_probs = K.sum(xs, dim=-1), torch.empty_like(xs), torch.empty_like(wide)
    sum_go, softmax_go = (
        closure_value(sum_plan, "source"),
        closure_value(softmax_plans[0], "source"),
    )
    wide_go = closure_value(softmax_plans[1], "source")
    kernel_variants.update(
        {
            "K.sum(dim=-1): its plan called directly": lambda: sum_plan(xs),
            "K.sum(dim=-1): its prepared launch only": lambda: sum_go(xs, values),
            "K.softmax: its plan called directly": lambda: softmax_plans[0](xs, None),
            "K.softmax: its prepared launch only": lambda: softmax_go(xs, probs),
            "K.softmax 4096x8192: its prepared launch only": lambda: wide_go(wide, wide_probs),
        }
    )
    # histogram and cumsum (issue 15 item 5): the calls and the torch pieces a plan runs
    v = torch.randn(1 << 20, device="cuda")
    counts = torch.zeros(256, dtype=torch.int32, device="cuda")
    kernel_variants.update(
        {
            "K.histogram(256, range)": lambda: K.histogram(v, 256, range=(-4.0, 4.0)),
            "torch.histc(256, range).long()": lambda: torch.histc(v, 256, min=-4.0, max=4.0).long(),
            "torch.zeros(256, int32)": lambda: torch.zeros(256, dtype=torch.int32, device=v.device),
            "counts.to(int64)": lambda: counts.to(torch.int64),
            "K.cumsum(dim=-1)": lambda: K.cumsum(xs, dim=-1),
            "torch.cumsum(dim=-1)": lambda: torch.cumsum(xs, -1),
        }
    )
    result["kernels_host_us"] = per_call_us(kernel_variants, calls=200, rounds=9)
    # K.sum(dim=-1) in pieces: the plan with its launch a no-op (allocation and the
    # plan's own Python), the allocation alone, and the public function's key
    go_cell = next(c for c in sum_plan.__closure__ if c.cell_contents is sum_go)
    go_cell.cell_contents = lambda *a: None
    new_values = next(
        c.cell_contents
        for c in sum_plan.__closure__
        if isinstance(c.cell_contents, functools.partial)
    )
    pieces = {
        "K.sum(dim=-1): its plan, the launch a no-op": lambda: sum_plan(xs),
        "K.sum(dim=-1): its output allocation alone": new_values,
        "K.sum(dim=-1), the launch a no-op": lambda: K.sum(xs, dim=-1),
    }
    result["kernels_host_us"].update(per_call_us(pieces, calls=200, rounds=9))
    go_cell.cell_contents = sum_go
    env.update(
        {
            "xs": xs,
            "last": sys.modules["portagpu.kernels._dispatch"]._last,
            "env_impl": sys.modules["portagpu.kernels._dispatch"].env_impl,
        }
    )
    result["micro_ns"].update(
        {
            name: stmt_ns(stmt, env)
            for name, stmt in {
                "threading.local write (last_impl)": "last.impl = 'triton'",
                "K.sum's key (4096x1024)": "(xs.shape, xs.dtype, xs.device, xs.is_contiguous(), -1, False, None, env_impl())",
            }.items()
        }
    )
    facts["generated launch of K.sum(dim=-1)"] = getattr(sum_go, "source", "<none>")
    profiles = []
    for name in (
        "K.softmax",
        "K.layer_norm fp16",
        "K.sum(dim=-1)",
        "K.histogram(256, range)",
        "K.cumsum(dim=-1)",
    ):
        call = kernel_variants[name]
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(300):
            call()
        profile.disable()
        torch.cuda.synchronize()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(28)
        profiles.append(f"===== {name} (300 calls) =====\n{text.getvalue()}")
    result["facts"] = facts
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "host_profile.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    (options.out / "host_profile_cprofile.txt").write_text("\n".join(profiles))
    for section in ("triton_host_us", "cupy_host_us", "kernels_host_us", "micro_ns"):
        print(f"\n{section}:")
        for k, v in result[section].items():
            print(f"  {v:>9}  {k}")
    print("\nfacts:")
    for k, v in facts.items():
        print(f"--- {k}\n{v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
