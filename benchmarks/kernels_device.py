"""portagpu.kernels on a GPU that is not the current one, and the host cost of
the eager kernels on the current one (GPU machine).

    python benchmarks/kernels_device.py two-gpu [--out FILE]   # needs two GPUs
    python benchmarks/kernels_device.py host [--out FILE] [--rounds N]

two-gpu: each case in a child process of its own, all at once (a kernel that
faults takes only its child down). cuda:0 is current and cuda:1's current
stream is a side stream; the op gets an input on cuda:1 that is written on
that stream after a ~25 ms sleep (the op ran once before, so no compile is in
the sleep), so only a kernel on cuda:1's current stream sees it. Reported per
case: the result against torch's on the same input, the devices Triton
compiled the op's kernels for (JITFunction.device_caches) and CudaKernel
loaded them on, the current device after the call, and host us per call with
the cuda:1 tensors while cuda:0 is current and while cuda:1 is. Runs against
whichever portagpu is importable: main's shows the bug, a fix shows it gone.

host: host us per eager call (100 calls and no sync per round, rounds
interleaved; median and min over rounds) with tensors on the current device,
torch.softmax and torch.add as controls for drift between processes: the A/B
of the common path (run it with each tree, alternately). --detect-first calls
portagpu.detect() before any kernel (otherwise the first kernels' plans are
made before the device layer's first detection, which the CudaKernel launch
of `sum 1M (cuda)` then makes).

Writes a table to stdout and JSON to --out.
"""

# ruff: noqa: I001  (portagpu before triton)
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import portagpu
import portagpu.kernels as K
import torch
import torch.nn.functional as F  # noqa: N812
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_overhead import ADD_SOURCE, add_kernel  # noqa: E402

SLEEP_CYCLES = 50_000_000  # ~25 ms at the H200's clock
CUDA_FILES = ("reduce.cu", "scan.cu", "histogram.cu")


def cases(device: str) -> dict[str, tuple[Any, Any, Any]]:
    """name -> (op, torch reference, input) with inputs on `device`."""
    generator = torch.Generator(device=device).manual_seed(15)

    def randn(*shape: int, dtype: Any = torch.float32) -> Any:
        return torch.randn(*shape, generator=generator, device=device).to(dtype)

    y, w, b = randn(1 << 20), randn(1024, dtype=torch.float16), randn(1024, dtype=torch.float16)
    mb, mbias = randn(512, 512, dtype=torch.bfloat16), randn(512, dtype=torch.bfloat16)
    centres = torch.randint(0, 256, (1 << 20,), device=device, generator=generator).float() + 0.5
    add_cuda = portagpu.CudaKernel(ADD_SOURCE, "add")  # launch_overhead.py's kernels

    def launch_triton(x: Any) -> Any:
        out = torch.empty_like(x)
        portagpu.launch(
            add_kernel, (triton.cdiv(x.numel(), 1024),), x, y, out, x.numel(), BLOCK=1024
        )
        return out

    def launch_cuda(x: Any) -> Any:
        out = torch.empty_like(x)
        portagpu.launch(add_cuda, (triton.cdiv(x.numel(), 256),), x, y, out, x.numel(), block=256)
        return out

    rows, rows16 = randn(4096, 1024), randn(4096, 1024, dtype=torch.float16)
    return {
        "add 1M": (lambda x: K.add(x, y), lambda x: x + y, randn(1 << 20)),
        "sum 1M (triton)": (lambda x: K.sum(x, impl="triton"), torch.sum, randn(1 << 20)),
        "sum 1M (cuda)": (lambda x: K.sum(x, impl="cuda"), torch.sum, randn(1 << 20)),
        "sum(dim=-1) 4096x1024": (lambda x: K.sum(x, -1), lambda x: x.sum(-1), rows),
        "max(dim=-1) 4096x1024": (lambda x: K.max(x, -1).values, lambda x: x.max(-1).values, rows),
        "softmax 4096x1024": (K.softmax, lambda x: torch.softmax(x, -1), rows),
        "softmax(dim=0) 4096x1024": (
            lambda x: K.softmax(x, 0),
            lambda x: torch.softmax(x, 0),
            rows,
        ),
        "layer_norm fp16 4096x1024": (
            lambda x: K.layer_norm(x, 1024, w, b),
            lambda x: F.layer_norm(x, (1024,), w, b),
            rows16,
        ),
        "cumsum 4096x1024 (triton)": (
            lambda x: K.cumsum(x, impl="triton"),
            lambda x: x.cumsum(-1),
            rows,
        ),
        "cumsum 4096x1024 (cuda)": (
            lambda x: K.cumsum(x, impl="cuda"),
            lambda x: x.cumsum(-1),
            rows,
        ),
        "histogram 1M (cuda)": (
            lambda x: K.histogram(x, 256, (0.0, 256.0), impl="cuda"),
            lambda x: torch.bincount(x.long(), minlength=256),
            centres,
        ),
        "histogram 1M (triton)": (
            lambda x: K.histogram(x, 256, (0.0, 256.0), impl="triton"),
            lambda x: torch.bincount(x.long(), minlength=256),
            centres,
        ),
        "matmul_bias_act bf16 512^3": (
            lambda a: K.matmul_bias_act(a, mb, mbias, "gelu"),
            lambda a: F.gelu(a.float() @ mb.float() + mbias.float()).to(a.dtype),
            randn(512, 512, dtype=torch.bfloat16),
        ),
        "portagpu.launch Triton 1M": (launch_triton, lambda x: x + y, randn(1 << 20)),
        "portagpu.launch CudaKernel 1M": (launch_cuda, lambda x: x + y, randn(1 << 20)),
    }


TOLERANCE = {torch.float32: 2e-3, torch.float16: 2e-2, torch.bfloat16: 5e-2}


def host_us(fn: Any, calls: int, rounds: int) -> list[float]:
    """Mean host us per call over `calls` calls with no sync, one sample per round."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return samples


# --- two GPUs ---------------------------------------------------------------------------
def triton_devices() -> dict[str, list[int]]:
    """Triton kernels of this process with compiled entries, and their devices."""
    import gc

    found: dict[str, list[int]] = {}
    for obj in gc.get_objects():
        if type(obj).__name__ != "JITFunction":
            continue
        for device, entry in list(getattr(obj, "device_caches", {}).items()):
            kernels = entry[0] if isinstance(entry, tuple) else entry
            if kernels:
                found.setdefault(obj.__name__, []).append(int(device))
    return found


def cuda_devices() -> dict[str, list[int]]:
    """portagpu.kernels' CUDA C kernels and the devices each was loaded on."""
    from portagpu.kernels import _cuda

    found: dict[str, list[int]] = {}
    for file in CUDA_FILES:
        for name, kernel in _cuda.module(file)._kernels.items():
            found[name] = sorted(kernel._prepared)
    for kernel in __import__("gc").get_objects():
        if isinstance(kernel, portagpu.CudaKernel) and kernel.name == "add":
            found["add"] = sorted(kernel._prepared)
    return found


def child(name: str) -> dict[str, Any]:
    """One case on cuda:1 while cuda:0 is current (see the module docstring)."""
    result: dict[str, Any] = {"case": name}
    torch.cuda.set_device(0)
    side = torch.cuda.Stream(device=1)
    torch.cuda.set_stream(side)  # cuda:1's current stream (makes cuda:1 current)
    torch.cuda.set_device(0)
    op, reference, x = cases("cuda:1")[name]
    expected = reference(x)
    try:
        op(x)  # compiles
        side.synchronize()
        late = torch.zeros_like(x)
        with torch.cuda.device(1):
            torch.cuda._sleep(SLEEP_CYCLES)
        late.copy_(x)
        got = op(late)
        result["current_after"] = torch.cuda.current_device()
        result["impl"] = K.last_impl() if "launch" not in name else "-"
        side.synchronize()
        error = float(
            (got.double() - expected.double()).norm() / expected.double().norm().clamp_min(1e-30)
        )
        result["relative_error"] = error
        result["ok"] = error <= TOLERANCE.get(got.dtype, 0.0)
    except Exception as exc:  # noqa: BLE001 - a fault is the finding
        result.update(ok=False, error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        return result
    finally:
        result["triton_devices"] = triton_devices()
        result["cuda_devices"] = cuda_devices()
    if result["ok"]:
        off = host_us(lambda: op(x), 200, 7)
        torch.cuda.set_device(1)
        on = host_us(lambda: op(x), 200, 7)
        torch.cuda.set_device(0)
        result["host_us_cuda0_current"] = round(statistics.median(off), 2)
        result["host_us_cuda1_current"] = round(statistics.median(on), 2)
    return result


def two_gpu(out: Path) -> int:
    if torch.cuda.device_count() < 2:
        print("kernels_device two-gpu: needs two GPUs (no result written)")
        return 0
    names = list(cases("cpu"))
    children = {
        name: subprocess.Popen(
            [sys.executable, __file__, "child", name],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in names
    }
    results = []
    for name, process in children.items():
        try:
            output, _ = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            output += "\n(timed out)"
        lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
        if lines:
            results.append(json.loads(lines[-1][7:]))
        else:
            tail = output.strip().splitlines()[-3:]
            results.append(
                {
                    "case": name,
                    "ok": False,
                    "error": f"child exit {process.returncode}: " + " | ".join(tail)[-400:],
                }
            )
    lines = [
        "| case | impl | right on cuda:1's stream | Triton compiled for | CUDA C loaded on | current after "
        "| host us (cuda:0 current) | host us (cuda:1 current) |",
        "|---|---|---|---|---|---|---:|---:|",
    ]
    for r in results:
        problem = r.get("error") or f"relative error {r.get('relative_error', float('nan')):.3g}"
        verdict = "yes" if r["ok"] else f"NO ({problem})"
        triton_on = ", ".join(f"{k}: {v}" for k, v in r.get("triton_devices", {}).items())
        cuda_on = ", ".join(f"{k}: {v}" for k, v in r.get("cuda_devices", {}).items() if v)
        lines.append(
            f"| {r['case']} | {r.get('impl', '')} | {verdict} | {triton_on} | {cuda_on} | "
            f"{r.get('current_after', '')} | {r.get('host_us_cuda0_current', '')} | "
            f"{r.get('host_us_cuda1_current', '')} |"
        )
    print("\n".join(lines))
    write(
        out,
        {
            "mode": "two-gpu",
            "device": torch.cuda.get_device_name(1),
            **versions(),
            "results": results,
        },
    )
    return 0 if all(r["ok"] for r in results) else 1


# --- host cost on the current device ---------------------------------------------------
def host(out: Path, rounds: int, detect_first: bool) -> int:
    if detect_first:
        portagpu.detect()
    table = cases("cuda")
    controls = {
        "torch.softmax 4096x1024 (control)": (
            lambda x: torch.softmax(x, -1),
            None,
            table["softmax 4096x1024"][2],
        ),
        "torch.add 1M (control)": (lambda x: torch.add(x, x), None, table["add 1M"][2]),
    }
    table = {k: v for k, v in table.items() if "launch" not in k} | controls
    calls = {name: (lambda op=op, x=x: op(x)) for name, (op, _, x) in table.items()}
    for fn in calls.values():
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            samples[name] += host_us(fn, 100, 1)
    rows = {
        name: {"median_us": round(statistics.median(s), 3), "min_us": round(min(s), 3)}
        for name, s in samples.items()
    }
    print("| op | host us median | min |\n|---|---:|---:|")
    for name, row in rows.items():
        print(f"| {name} | {row['median_us']:.2f} | {row['min_us']:.2f} |")
    write(
        out,
        {
            "mode": "host",
            "device": torch.cuda.get_device_name(),
            "rounds": rounds,
            "calls_per_round": 100,
            "detect_first": detect_first,
            "portagpu_path": os.path.dirname(portagpu.__file__),
            **versions(),
            "host_us": rows,
            "samples": {k: [round(v, 3) for v in s] for k, s in samples.items()},
        },
    )
    return 0


def versions() -> dict[str, str]:
    return {"torch": torch.__version__, "triton": triton.__version__}


def write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    temporary.replace(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["two-gpu", "host", "child"])
    parser.add_argument("case", nargs="?")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/kernels_device.json"))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--detect-first", action="store_true", help="portagpu.detect() before any kernel"
    )
    options = parser.parse_args()
    if not torch.cuda.is_available():
        print("kernels_device: needs a CUDA GPU (no result written)")
        return 0
    if options.mode == "child":
        print("RESULT " + json.dumps(child(options.case)), flush=True)
        return 0
    if options.mode == "two-gpu":
        return two_gpu(options.out)
    return host(options.out, options.rounds, options.detect_first)


if __name__ == "__main__":
    sys.exit(main())
