"""Triton kernels on a machine without a GPU: a torch reference
(portagpu.reference_for, the default there) against Triton's interpreter
(`portagpu.launch(..., interpret=True)`), and torch's own op.

    PORTAGPU_DEVICE=cpu python benchmarks/cpu_reference.py [--out DIR] [--label NAME]

Vector add of 2^20 floats at BLOCK 1024 and 16384 (the interpreter's cost
grows with the number of programs) and a row softmax of 1024x1024, one row
per program. Median of a few timed calls each, after one warm-up; every
variant is checked against torch first. Writes cpu_reference[_LABEL].{json,md}.
"""

# ruff: noqa: I001  (portagpu before triton)
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import portagpu

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_overhead import add_kernel  # noqa: E402

RESULTS = Path(__file__).with_name("results")


@triton.jit
def softmax_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * cols + offsets, e / tl.sum(e, 0), mask=mask)


@portagpu.reference_for(add_kernel)
def add_reference(x, y, out, n, BLOCK):
    torch.add(x[:n], y[:n], out=out[:n])


@portagpu.reference_for(softmax_kernel)
def softmax_reference(x, out, cols, BLOCK):
    torch.softmax(x.view(-1, cols), -1, out=out.view(-1, cols))


def median_ms(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--label", default="")
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    device = portagpu.detect()
    if device.is_gpu:
        print(
            "cpu_reference measures the CPU path: run it with PORTAGPU_DEVICE=cpu", file=sys.stderr
        )
        return 2
    n = 1 << 20
    x, y, out = torch.randn(n), torch.randn(n), torch.empty(n)
    rows = cols = 1024
    m, mout = torch.randn(rows, cols), torch.empty(rows, cols)

    def add_case(block: int) -> tuple:
        def launch(**options):
            portagpu.launch(
                add_kernel, (triton.cdiv(n, block),), x, y, out, n, BLOCK=block, **options
            )

        return launch, lambda: torch.add(x, y, out=out), out, lambda: x + y

    def softmax_launch(**options):
        portagpu.launch(softmax_kernel, (rows,), m, mout, cols, BLOCK=1024, **options)

    cases = {
        "add 2^20, BLOCK=1024": add_case(1024),
        "add 2^20, BLOCK=16384": add_case(16384),
        "softmax 1024x1024, a row per program": (
            softmax_launch,
            lambda: torch.softmax(m, -1, out=mout),
            mout,
            lambda: torch.softmax(m, -1),
        ),
    }
    results = []
    for name, (launch, native, result, expected) in cases.items():
        row = {"case": name}
        for variant, fn, repeats in (
            ("reference (default)", launch, options.repeats),
            (
                "interpreter (interpret=True)",
                lambda launch=launch: launch(interpret=True),
                max(1, options.repeats // 2),
            ),
            ("torch op directly", native, options.repeats),
        ):
            result.fill_(float("nan"))
            fn()
            torch.testing.assert_close(result, expected())
            row[variant] = round(median_ms(fn, repeats), 3)
        row["interpreter / reference"] = round(
            row["interpreter (interpret=True)"] / row["reference (default)"], 1
        )
        results.append(row)
        print(json.dumps(row), flush=True)
    import triton as triton_module

    payload = {
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "triton": triton_module.__version__,
            "device": device.name,
        },
        "unit": "ms per call, median",
        "rows": results,
    }
    lines = [
        f"# Triton kernels on the CPU: reference vs interpreter ({payload['machine']['cpu']}, "
        f"{payload['machine']['cores']} cores)",
        "",
        f"torch {torch.__version__}, triton {triton_module.__version__}; ms per call, median",
        "",
        "| case | reference (default) | interpreter (interpret=True) | torch op | interpreter / reference |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in results:
        lines.append(
            f"| {row['case']} | {row['reference (default)']} | {row['interpreter (interpret=True)']} | "
            f"{row['torch op directly']} | {row['interpreter / reference']}x |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    options.out.mkdir(parents=True, exist_ok=True)
    suffix = f"_{options.label}" if options.label else ""
    (options.out / f"cpu_reference{suffix}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (options.out / f"cpu_reference{suffix}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
