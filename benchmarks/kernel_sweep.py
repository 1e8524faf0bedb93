"""Per-shape sweep of kernel bodies and launch configs for softmax (fp32),
layer_norm (fp16) and sum(dim=-1) (fp32) at the issue-15 shapes, against torch.

    python benchmarks/kernel_sweep.py [--out PATH] [--budget-s 400] [--only softmax,sum] [--shapes 65536x128]

For every shape: torch's op and each candidate -- the kernels of
portagpu.kernels at several configs, and the bodies they replaced
(kernel_candidates.py) -- launched natively into a preallocated output and
timed by CUDA-graph replay (kernels_bench.graph_us). Every candidate is
checked against torch before it is timed. Rounds are interleaved; the
summary keeps the best round of each. This is how the rows of
kernels/tuning.yaml were chosen; kernels_bench.py measures the result.
"""

# ruff: noqa: I001  (portagpu before triton)
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import portagpu

import torch
import torch.nn.functional as F  # noqa: N812
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_candidates as C  # noqa: E402
from kernels_bench import graph_us  # noqa: E402
from portagpu.kernels._triton import layer_norm as LN  # noqa: E402
from portagpu.kernels._triton import reduction as RD  # noqa: E402
from portagpu.kernels._triton import softmax as SM  # noqa: E402

SHAPES = [(4096, 1024), (4096, 8192), (8192, 50304), (65536, 128)]
ROWS_OUT: list[dict[str, Any]] = []
OUT = ""
START = time.monotonic()
BUDGET = 400.0
Candidates = list[tuple[str, Callable[[], Any]]]


def save() -> None:
    if OUT:
        tmp = OUT + ".tmp"
        with open(tmp, "w") as f:
            json.dump(
                {"device": torch.cuda.get_device_name(), "rows": ROWS_OUT}, f, indent=1, default=str
            )
        os.replace(tmp, OUT)


def record(**row: Any) -> None:
    ROWS_OUT.append(row)
    print(
        "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
        flush=True,
    )
    save()


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    got64, want64 = got.double(), want.double()
    if not bool(torch.isfinite(got64).all()):
        return float("inf")
    return float((got64 - want64).norm() / want64.norm().clamp_min(1e-30))


def over_budget() -> bool:
    return time.monotonic() - START > BUDGET


# --- candidates --------------------------------------------------------------------------
def softmax_candidates(rows: int, cols: int, x: torch.Tensor, out: torch.Tensor) -> Candidates:
    block = triton.next_power_of_2(cols)

    def fused(per: int, warps: int):
        grid = (triton.cdiv(rows, per),)
        return lambda: SM.softmax_kernel[grid](
            x, out, rows, cols, cols, cols, ROWS=per, BLOCK=block, num_warps=warps
        )

    def looped(kernel: Any, blk: int, warps: int):
        return lambda: kernel[(rows,)](x, out, cols, cols, cols, BLOCK=blk, num_warps=warps)

    if cols <= 256:
        return [
            (f"ROWS={per} w={warps}", fused(per, warps)) for per in (2, 4, 8) for warps in (1, 2, 4)
        ]
    if cols <= 8192:
        return [
            (f"ROWS={per} w={warps}", fused(per, warps))
            for per in (1, 2)
            for warps in ((4, 8) if cols <= 2048 else (8, 16, 32))
        ]
    return [
        (f"looped BLOCK={blk} w={warps}", looped(SM.softmax_looped_kernel, blk, warps))
        for blk, warps in ((4096, 16), (8192, 16), (8192, 32), (16384, 32))
    ] + [
        (
            f"previous looped BLOCK={blk} w={warps}",
            looped(C.previous_softmax_looped_kernel, blk, warps),
        )
        for blk, warps in ((8192, 16), (8192, 32))
    ]


def layer_norm_candidates(rows: int, cols: int, x, w, b, out) -> Candidates:
    block = triton.next_power_of_2(cols)
    eps = 1e-5
    tensors, flags = (x, w, b, out), {"HAS_WEIGHT": True, "HAS_BIAS": True}

    def fused(per: int, warps: int):
        grid = (triton.cdiv(rows, per),)
        return lambda: LN.layer_norm_kernel[grid](
            *tensors, rows, cols, cols, cols, eps, **flags, ROWS=per, BLOCK=block, num_warps=warps
        )

    def per_row(kernel: Any, blk: int, warps: int):
        return lambda: kernel[(rows,)](
            *tensors, cols, cols, cols, eps, **flags, BLOCK=blk, num_warps=warps
        )

    if cols <= 256:
        return [
            (f"ROWS={per} w={warps}", fused(per, warps))
            for per in (8, 16, 32)
            for warps in (2, 4, 8)
        ]
    if cols <= 8192:
        warps_list = (2, 4, 8) if cols <= 2048 else (8, 16, 32)
        return (
            [(f"ROWS=1 w={warps}", fused(1, warps)) for warps in warps_list]
            + [(f"ROWS=2 w={warps}", fused(2, warps)) for warps in warps_list[:2]]
            + [
                (f"previous one row w={warps}", per_row(C.previous_layer_norm_kernel, block, warps))
                for warps in warps_list
            ]
        )
    return [
        (f"Welford BLOCK={blk} w={warps}", per_row(LN.layer_norm_looped_kernel, blk, warps))
        for blk, warps in ((2048, 8), (4096, 8), (4096, 16), (8192, 16))
    ] + [
        (
            "previous three-pass BLOCK=8192 w=16",
            per_row(C.previous_layer_norm_looped_kernel, 8192, 16),
        )
    ]


def sum_candidates(rows: int, cols: int, x, out, index) -> Candidates:
    def rows_kernel(per: int, blk: int, warps: int):
        grid = (triton.cdiv(rows, per),)
        return lambda: RD.reduce_rows_kernel[grid](
            x, out, index, rows, cols, cols, IS_MAX=False, ROWS=per, BLOCK=blk, num_warps=warps
        )

    def previous(blk: int, warps: int):
        return lambda: C.previous_reduce_rows_kernel[(rows,)](
            x, out, cols, cols, BLOCK=blk, num_warps=warps
        )

    if cols <= 256:
        configs = [(per, 128, warps) for per in (16, 32, 64) for warps in (4, 8)]
        base = previous(128, 4)
    elif cols <= 1024:
        configs = [(1, 1024, 4), (2, 512, 4), (4, 256, 4), (4, 512, 8)]
        base = previous(1024, 4)
    else:
        configs = [(1, 2048, 8), (1, 4096, 8), (1, 4096, 16), (1, 8192, 16), (2, 2048, 8)]
        base = previous(2048 if cols <= 8192 else 4096, 8 if cols <= 8192 else 16)
    return [
        (f"ROWS={per} BLOCK={blk} w={warps}", rows_kernel(per, blk, warps))
        for per, blk, warps in configs
    ] + [("previous one row per program (old table)", base)]


# --- driver ----------------------------------------------------------------------------------
def sweep_op(
    op: str,
    shape: tuple[int, int],
    reference: Callable[[], Any],
    candidates: Candidates,
    check: Callable[[], float],
    tolerance: float,
    rounds: int,
) -> None:
    label = "x".join(map(str, shape))
    ok: Candidates = []
    for name, fn in candidates:
        try:
            fn()
            torch.cuda.synchronize()
            error = check()
        except Exception as exc:  # noqa: BLE001 - out of resources, compile errors: record and go on
            record(
                op=op, shape=label, variant=name, error=f"{type(exc).__name__}: {str(exc)[:200]}"
            )
            continue
        if error > tolerance:
            record(op=op, shape=label, variant=name, error=f"relative error {error:.3g}")
            continue
        ok.append((name, fn))
    for round_index in range(rounds):
        if over_budget():
            record(op=op, shape=label, variant="(budget reached: rounds cut)")
            return
        order = ok if round_index % 2 == 0 else list(reversed(ok))
        record(op=op, shape=label, variant="torch", round=round_index, graph_us=graph_us(reference))
        for name, fn in order:
            record(op=op, shape=label, variant=name, round=round_index, graph_us=graph_us(fn))


def main() -> int:
    global OUT, BUDGET
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="kernel_sweep.json")
    parser.add_argument("--budget-s", type=float, default=400.0)
    parser.add_argument("--only", default="softmax,layer_norm,sum")
    parser.add_argument(
        "--shapes", default="", help="e.g. 65536x128,4096x1024 (default: the issue's four)"
    )
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    OUT, BUDGET = args.out, args.budget_s
    ops = args.only.split(",")
    shapes = (
        [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
        if args.shapes
        else SHAPES
    )
    print(
        f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
        f"portagpu {portagpu.__version__}",
        flush=True,
    )
    for rows, cols in shapes:
        if "softmax" in ops and not over_budget():
            x = torch.randn(rows, cols, device="cuda")
            out = torch.empty_like(x)
            want = torch.softmax(x, -1)
            sweep_op(
                "softmax",
                (rows, cols),
                lambda x=x: torch.softmax(x, -1),
                softmax_candidates(rows, cols, x, out),
                lambda out=out, want=want: relative_error(out, want),
                1e-4,
                args.rounds,
            )
            del x, out, want
        if "layer_norm" in ops and not over_budget():
            x = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
            w = torch.randn(cols, device="cuda", dtype=torch.float16)
            b = torch.randn(cols, device="cuda", dtype=torch.float16)
            out = torch.empty_like(x)
            want = F.layer_norm(x.float(), (cols,), w.float(), b.float())
            sweep_op(
                "layer_norm",
                (rows, cols),
                lambda x=x, w=w, b=b: F.layer_norm(x, (x.shape[-1],), w, b),
                layer_norm_candidates(rows, cols, x, w, b, out),
                lambda out=out, want=want: relative_error(out, want),
                5e-3,
                args.rounds,
            )
            del x, w, b, out, want
        if "sum" in ops and not over_budget():
            x = torch.randn(rows, cols, device="cuda")
            out = torch.empty(rows, device="cuda")
            index = torch.empty(1, device="cuda", dtype=torch.int64)
            want = x.double().sum(-1)
            sweep_op(
                "sum(dim=-1)",
                (rows, cols),
                lambda x=x: torch.sum(x, -1),
                sum_candidates(rows, cols, x, out, index),
                lambda out=out, want=want: relative_error(out, want),
                1e-5,
                args.rounds,
            )
            del x, out, index, want
        torch.cuda.empty_cache()
    summarize()
    return 0


def summarize() -> None:
    """Best graph time per (op, shape, variant), next to torch's."""
    best: dict[tuple[str, str, str], float] = {}
    for row in ROWS_OUT:
        if "graph_us" in row:
            key = (row["op"], row["shape"], row["variant"])
            best[key] = min(best.get(key, float("inf")), row["graph_us"])
    print("\nbest graph us (torch / candidate):")
    for (op, shape, variant), us in sorted(best.items()):
        torch_us = best.get((op, shape, "torch"))
        ratio = f"{torch_us / us:.2f}x" if torch_us else ""
        print(f"{op:<12} {shape:<12} {variant:<44} {us:9.2f} {ratio}")


if __name__ == "__main__":
    sys.exit(main())
