"""Benchmark portagpu.kernels against the device's copy bandwidth and torch.

    python benchmarks/kernels_bench.py [--quick] [--sweep] [--out PATH]

Every row is measured side by side in one run on one device and names the
implementation that ran (portagpu.kernels.last_impl()), the device and the
ratio to its reference:
- memory-bound kernels: GB/s (bytes a minimal kernel must move) and the ratio
  to a measured device-to-device copy, plus the ratio to the torch op;
- GEMMs: TFLOP/s and the ratio to torch (portagpu.matmul = the vendor BLAS;
  the fused Triton matmul + bias + GELU against torch's unfused sequence).

Times are medians from CUDA-graph replays (pure GPU time: Python dispatch is
not in the graph) when capture works, else CUDA events around each call with
the L2 cache flushed (triton.testing.do_bench); the `timing` column says which.
--sweep also times candidate launch configs, to retune kernels/tuning.yaml
(benchmarks/results/kernels_bench_run*_sweep.json keep earlier sweeps).

The issue-15 table (softmax fp32, layer_norm fp16, sum(dim=-1) fp32 at
4096x1024, 4096x8192, 8192x50304 and 65536x128), and a second one for
histogram, cumsum, matmul_bias_act and portagpu.matmul at sizes where the
host cost shows (--shapes-only runs just these two), put each call next to
torch's, both allocating their output, in three ways, medians of interleaved
rounds:
- graph: us per call in a CUDA-graph replay of back-to-back calls (GPU time);
- eager: us per call of back-to-back eager calls, synchronised at the end
  (what a user's loop pays: the larger of host and GPU time);
- host: us until the call returns, 100 calls with no sync among them (the
  Python and dispatch cost; host noise comes in rounds, so the minimum over
  the rounds is reported beside the median).
Writes a table to stdout and JSON to --out (atomically).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import portagpu.kernels as K
import torch
import torch.nn.functional as F  # noqa: N812
from portagpu.kernels import _dispatch, _tuning

import portagpu

ROWS: list[dict[str, Any]] = []


# --- timing --------------------------------------------------------------------------
def measure(fn: Callable[[], Any]) -> tuple[float, str]:
    """Median milliseconds per call of `fn`, and how it was measured."""
    import triton.testing

    fn()  # compile, allocate, pick the implementation
    torch.cuda.synchronize()
    try:
        return triton.testing.do_bench_cudagraph(fn, rep=60, return_mode="median"), "graph"
    except Exception:  # noqa: BLE001 - capture unsupported by some path: fall back to events
        torch.cuda.synchronize()
        return triton.testing.do_bench(fn, warmup=20, rep=80, return_mode="median"), "events"


def measure_pair(ours: Callable[[], Any], reference: Callable[[], Any] | None, rounds: int = 0
                 ) -> tuple[float, str, float | None]:
    """Ours and the reference timed alternately, each going first in every other
    round (a GPU that has just idled clocks higher, which would favour whichever
    runs first), with a pause before each; the best time of each over the rounds."""
    times: dict[str, list[float]] = {"ours": [], "ref": []}
    timing = "graph"
    for round_index in range(rounds or ROUNDS):
        order = [("ours", ours), ("ref", reference)]
        if round_index % 2:
            order.reverse()
        for name, fn in order:
            if fn is None:
                continue
            time.sleep(PAUSE_S)
            ms, how = measure(fn)
            times[name].append(ms)
            if name == "ours":
                timing = how
    return min(times["ours"]), timing, (min(times["ref"]) if times["ref"] else None)


def impl_of(fn: Callable[[], Any]) -> str:
    fn()
    return K.last_impl() or "?"


@contextmanager
def tuned(kernel: str, row: dict[str, Any]):
    """Use `row` instead of the tuning table's row for `kernel` (for --sweep)."""
    original = _tuning.config

    def patched(name: str, vendor: str, size: int) -> dict[str, Any]:
        return dict(row) if name == kernel else original(name, vendor, size)

    _tuning.config = patched
    _dispatch.forget_plans()  # plans made with the table's rows
    try:
        yield
    finally:
        _tuning.config = original
        _dispatch.forget_plans()


def graph_us(fn: Callable[[], Any], target_ms: float = 6.0) -> float:
    """Median us per call over 5 replays of a CUDA graph of back-to-back calls."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm up off the capture stream, as torch advises
        fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(3):
            fn()
        end.record()
        end.synchronize()
        estimate_us = max(start.elapsed_time(end) * 1000 / 3, 1.0)
    torch.cuda.current_stream().wait_stream(stream)
    calls = int(min(2000, max(5, target_ms * 1000 / estimate_us)))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / calls)
    del graph
    return statistics.median(times)


def eager_us(fn: Callable[[], Any]) -> float:
    """us per call of back-to-back eager calls (host and GPU overlap), synced at the end."""
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    calls = int(min(500, max(20, 0.02 / max(time.perf_counter() - start, 1e-6))))
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def host_us(fn: Callable[[], Any], calls: int = 100) -> float:
    """us until a call returns, over `calls` back-to-back calls with no sync
    among them (100 launches never fill the launch queue)."""
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


# --- rows ----------------------------------------------------------------------------
def add_row(**row: Any) -> None:
    ROWS.append(row)
    if OUT_PATH:  # keep what was measured even if the run is cut short
        write_json(OUT_PATH, {"device": DEVICE, "partial": True, "rows": ROWS})
    shown = {k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in row.items()
             if k not in ("device",)}
    print("  ".join(f"{k}={v}" for k, v in shown.items()), flush=True)


def guarded(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any] | None]:
    """A row that fails (a kernel error, a config out of resources) is reported and
    recorded, and the run goes on."""

    def run(kernel: str, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        try:
            return fn(kernel, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            message = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
            print(f"  {kernel} {kwargs.get('config', '')} FAILED: {message}", flush=True)
            ROWS.append(dict(kernel=kernel, config=kwargs.get("config", ""), device=DEVICE, error=message))
            return None

    return run


@guarded
def bandwidth_row(kernel: str, shape: tuple[int, ...], dtype: torch.dtype, bytes_moved: int,
                  ours: Callable[[], Any], reference: Callable[[], Any] | None, reference_name: str,
                  copy_gbs: float, target: str = "", config: str = "") -> dict[str, Any]:
    impl = impl_of(ours)
    ms, timing, ref_ms = measure_pair(ours, reference)
    gbs = bytes_moved / ms / 1e6
    row = dict(kernel=kernel, shape="x".join(map(str, shape)), dtype=str(dtype).removeprefix("torch."),
               impl=impl, config=config, device=DEVICE, timing=timing, ms=ms, GBps=gbs,
               vs_copy=gbs / copy_gbs, reference=reference_name, ref_ms=ref_ms,
               ref_GBps=(bytes_moved / ref_ms / 1e6) if ref_ms else None,
               vs_reference=(ref_ms / ms) if ref_ms else None, target=target)
    row["met"] = _met(row)
    add_row(**row)
    return row


def _met(row: dict[str, Any]) -> bool | None:
    target = row.get("target") or ""
    if target.startswith(">=") and "copy" in target:
        return row["vs_copy"] >= float(target.split()[0][2:].rstrip("%")) / 100
    if target.startswith(">= torch"):
        return row["vs_reference"] is not None and row["vs_reference"] >= 1.0
    if target.startswith("torch +-"):
        return abs(row["vs_reference"] - 1.0) <= float(target.split()[-1].rstrip("%")) / 100
    return None


# --- benchmarks ------------------------------------------------------------------------
def copy_bandwidth(n: int) -> float:
    """Device-to-device copy bandwidth (bytes read + written): the best of
    cudaMemcpy (copy_) and an SM kernel that reads and writes every element,
    each timed in a graph and with events. The targets are ratios to it."""
    import triton.testing

    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    ways = {"copy_ (memcpy)": lambda: dst.copy_(src), "mul(x, 1) (SM kernel)": lambda: torch.mul(src, 1.0, out=dst)}
    best = 0.0
    for name, fn in ways.items():
        graph_ms = min(measure(fn)[0] for _ in range(ROUNDS))
        events_ms = min(triton.testing.do_bench(fn, warmup=20, rep=80, return_mode="median")
                        for _ in range(ROUNDS))
        for ms, timing in ((graph_ms, "graph"), (events_ms, "events")):
            gbs = 2 * n * 4 / ms / 1e6
            best = max(best, gbs)
            add_row(kernel=f"copy: {name}", shape=str(n), dtype="float32", impl="torch", device=DEVICE,
                    timing=timing, ms=ms, GBps=gbs)
    for row in ROWS:
        if row["kernel"].startswith("copy:"):
            row["vs_copy"] = row["GBps"] / best
    return best


def bench_elementwise_and_reductions(n: int, copy_gbs: float, sweep: bool) -> None:
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    bandwidth_row("add", (n,), x.dtype, 3 * n * 4, lambda: K.add(x, y, out=out),
                  lambda: torch.add(x, y, out=out), "torch.add", copy_gbs, ">=90% copy")
    for impl in ("triton", "cuda"):
        bandwidth_row("sum", (n,), x.dtype, n * 4, lambda impl=impl: K.sum(x, impl=impl),
                      lambda: torch.sum(x), "torch.sum", copy_gbs, ">=90% copy")
        bandwidth_row("max", (n,), x.dtype, n * 4, lambda impl=impl: K.max(x, impl=impl),
                      lambda: torch.max(x), "torch.max", copy_gbs, ">=90% copy")
    rows2d = x.view(4096, -1)
    for impl in ("triton", "cuda"):
        bandwidth_row("sum(dim=-1)", tuple(rows2d.shape), x.dtype, n * 4,
                      lambda impl=impl: K.sum(rows2d, dim=-1, impl=impl),
                      lambda: torch.sum(rows2d, dim=-1), "torch.sum(dim)", copy_gbs, ">=90% copy")
    bandwidth_row("max(dim=-1)", tuple(rows2d.shape), x.dtype, n * 4,
                  lambda: K.max(rows2d, dim=-1, impl="triton"), lambda: torch.max(rows2d, dim=-1),
                  "torch.max(dim)", copy_gbs, ">=90% copy")



def bench_rows(cols_list: list[int], copy_gbs: float, sweep: bool) -> None:
    for cols in cols_list:
        bench_rows_at(cols, copy_gbs, sweep)


def bench_rows_at(cols: int, copy_gbs: float, sweep: bool) -> None:
    x = torch.randn(4096, cols, device="cuda")
    out = torch.empty_like(x)
    bandwidth_row("softmax", tuple(x.shape), x.dtype, 2 * x.numel() * 4,
                  lambda x=x, out=out: K.softmax(x, out=out), lambda x=x: torch.softmax(x, -1),
                  "torch.softmax", copy_gbs, ">= torch")
    xh = torch.randn(4096, cols, device="cuda", dtype=torch.float16)
    w, b = torch.randn(cols, device="cuda", dtype=xh.dtype), torch.randn(cols, device="cuda", dtype=xh.dtype)
    outh = torch.empty_like(xh)
    bandwidth_row("layer_norm", tuple(xh.shape), xh.dtype, 2 * xh.numel() * 2,
                  lambda xh=xh, w=w, b=b, outh=outh: K.layer_norm(xh, cols, w, b, out=outh),
                  lambda xh=xh, w=w, b=b: F.layer_norm(xh, (cols,), w, b), "F.layer_norm", copy_gbs,
                  ">= torch")
    if sweep and cols <= 1024:
        for warps in (1, 2, 4):
            for per_program in (1, 2, 4, 8):
                row = {"num_warps": warps, "ROWS": per_program, "max_fused_cols": 32768, "BLOCK": 4096}
                with tuned("softmax", row):
                    bandwidth_row("softmax [sweep]", tuple(x.shape), x.dtype, 2 * x.numel() * 4,
                                  lambda x=x, out=out: K.softmax(x, out=out), None, "", copy_gbs,
                                  config=json.dumps(row))


def bench_histogram_and_scan(n: int, copy_gbs: float, sweep: bool) -> None:
    x = torch.randn(n, device="cuda")
    if sweep:
        for threads, per_sm in ((256, 8), (512, 4), (1024, 2), (256, 16), (512, 8)):
            row = {"threads": threads, "blocks_per_sm": per_sm, "BLOCK": 4096, "num_warps": 8,
                   "programs_per_sm": 4, "max_block_bins": 1024, "max_shared_bytes": 49152}
            with tuned("histogram", row):
                bandwidth_row("histogram cuda [sweep]", (n,), x.dtype, n * 4,
                              lambda: K.histogram(x, 256, range=(-4.0, 4.0), impl="cuda"), None, "", copy_gbs,
                              config=json.dumps(row))
        for block, warps, per_sm in ((4096, 8, 4), (8192, 8, 2), (2048, 4, 8), (4096, 4, 8)):
            row = {"BLOCK": block, "num_warps": warps, "programs_per_sm": per_sm, "max_block_bins": 1024,
                   "threads": 512, "blocks_per_sm": 4}
            with tuned("histogram", row):
                bandwidth_row("histogram triton [sweep]", (n,), x.dtype, n * 4,
                              lambda: K.histogram(x, 256, range=(-4.0, 4.0), impl="triton"), None, "",
                              copy_gbs, config=json.dumps(row))
    for impl in ("cuda", "triton"):
        for bins in (256, 10_000):
            bandwidth_row(f"histogram({bins} bins)", (n,), x.dtype, n * 4,
                          lambda impl=impl, bins=bins: K.histogram(x, bins, range=(-4.0, 4.0), impl=impl),
                          lambda bins=bins: torch.histc(x, bins, -4.0, 4.0), "torch.histc", copy_gbs)
    # skewed data: 90% of the values in one bin (where warp aggregation pays)
    skewed = torch.where(torch.rand(n, device="cuda") < 0.9, torch.zeros_like(x), x)
    for impl in ("cuda", "triton"):
        bandwidth_row("histogram(256, 90% one bin)", (n,), x.dtype, n * 4,
                      lambda impl=impl: K.histogram(skewed, 256, range=(-4.0, 4.0), impl=impl),
                      lambda: torch.histc(skewed, 256, -4.0, 4.0), "torch.histc", copy_gbs)
    out = torch.empty_like(x)
    rows, out2 = x.view(4096, -1), out.view(4096, -1)
    for impl in ("triton", "cuda"):
        bandwidth_row("cumsum", (n,), x.dtype, 2 * n * 4, lambda impl=impl: K.cumsum(x, out=out, impl=impl),
                      lambda: torch.cumsum(x, 0, out=out), "torch.cumsum", copy_gbs)
        bandwidth_row("cumsum(dim=-1)", tuple(rows.shape), x.dtype, 2 * n * 4,
                      lambda impl=impl: K.cumsum(rows, out=out2, impl=impl),
                      lambda: torch.cumsum(rows, -1, out=out2), "torch.cumsum", copy_gbs)


@guarded
def gemm_row(kernel: str, size: int, ours: Callable[[], Any], impl: str, reference: Callable[[], Any],
             reference_name: str, target: str, config: str = "") -> dict[str, Any]:
    ms, timing, ref_ms = measure_pair(ours, reference, rounds=2 * ROUNDS)
    flops = 2 * size**3
    row = dict(kernel=kernel, shape=f"{size}^3", dtype="bfloat16", impl=impl, config=config, device=DEVICE,
               timing=timing, ms=ms, TFLOPs=flops / ms / 1e9, reference=reference_name, ref_ms=ref_ms,
               ref_TFLOPs=flops / ref_ms / 1e9, vs_reference=ref_ms / ms, target=target)
    row["met"] = _met(row)
    add_row(**row)
    return row


def bench_gemm(sizes: list[int], sweep: bool) -> None:
    for size in sizes:
        bench_gemm_at(size, sweep)


def bench_gemm_at(size: int, sweep: bool) -> None:
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(size, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
    portagpu.matmul(a, b)
    blas = str(portagpu.last_backend())
    gemm_row("portagpu.matmul", size, lambda: portagpu.matmul(a, b, out=c), blas,
             lambda: torch.matmul(a, b, out=c), "torch.matmul", "torch +- 2%")
    fused_impl = impl_of(lambda: K.matmul_bias_act(a, b, bias, act="gelu", out=c))
    gemm_row("matmul+bias+gelu (fused)", size, lambda: K.matmul_bias_act(a, b, bias, act="gelu", out=c),
             fused_impl, lambda: F.gelu(torch.matmul(a, b) + bias), "torch matmul, +bias, gelu",
             ">= torch")
    if sweep and size == 4096:
        for bm, bn, bk, warps, stages, group in ((128, 256, 64, 8, 3, 8), (128, 256, 64, 8, 3, 16),
                                                 (128, 256, 64, 8, 3, 4), (128, 256, 64, 8, 4, 16),
                                                 (256, 128, 64, 8, 3, 16)):
            row = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group, "num_warps": warps,
                   "num_stages": stages}
            with tuned("matmul_bias_act", row):
                try:
                    gemm_row("fused [sweep]", size, lambda: K.matmul_bias_act(a, b, bias, out=c), "triton",
                             lambda: F.gelu(torch.matmul(a, b) + bias), "torch unfused", "",
                             config=json.dumps(row))
                except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory
                    print(f"  config {row} failed: {type(exc).__name__}: {str(exc)[:200]}")


# --- the issue-15 table ----------------------------------------------------------------
ISSUE_SHAPES = [(4096, 1024), (4096, 8192), (8192, 50304), (65536, 128)]


def issue_cases(rows: int, cols: int) -> list[tuple[str, str, Callable[[], Any], Callable[[], Any], str]]:
    """(kernel, dtype, ours, torch's, torch name) at one shape; both allocate their output."""
    x = torch.randn(rows, cols, device="cuda")
    xh = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
    w, b = torch.randn(cols, device="cuda", dtype=torch.float16), torch.randn(cols, device="cuda", dtype=torch.float16)
    return [
        ("softmax", "float32", lambda: K.softmax(x), lambda: torch.softmax(x, -1), "torch.softmax"),
        ("layer_norm", "float16", lambda: K.layer_norm(xh, cols, w, b), lambda: F.layer_norm(xh, (cols,), w, b),
         "F.layer_norm"),
        ("sum(dim=-1)", "float32", lambda: K.sum(x, dim=-1), lambda: torch.sum(x, -1), "torch.sum(dim)"),
    ]


@guarded
def issue_row(kernel: str, shape: tuple[int, ...], dtype: str, ours: Callable[[], Any], reference: Callable[[], Any],
              reference_name: str, rounds: int, label: str = "issue 15") -> dict[str, Any]:
    impl = impl_of(ours)
    samples: dict[str, list[float]] = {f"{who}_{how}": [] for who in ("ours", "ref") for how in ("graph", "eager", "host")}
    for round_index in range(rounds):
        order = [("ours", ours), ("ref", reference)]
        if round_index % 2:
            order.reverse()
        for who, fn in order:
            time.sleep(PAUSE_S)
            samples[f"{who}_graph"].append(graph_us(fn))
            samples[f"{who}_eager"].append(eager_us(fn))
            samples[f"{who}_host"].append(host_us(fn))
    med = {k: statistics.median(v) for k, v in samples.items()}
    row = dict(kernel=f"{kernel} [{label}]", shape="x".join(map(str, shape)), dtype=dtype, impl=impl,
               device=DEVICE, timing="graph", ms=med["ours_graph"] / 1000, reference=reference_name,
               ref_ms=med["ref_graph"] / 1000, vs_reference=med["ref_graph"] / med["ours_graph"],
               graph_us=med["ours_graph"], ref_graph_us=med["ref_graph"],
               eager_us=med["ours_eager"], ref_eager_us=med["ref_eager"],
               eager_vs_reference=med["ref_eager"] / med["ours_eager"],
               host_us=med["ours_host"], ref_host_us=med["ref_host"], host_extra_us=med["ours_host"] - med["ref_host"],
               host_min_us=min(samples["ours_host"]), ref_host_min_us=min(samples["ref_host"]),
               rounds=rounds, samples={k: [round(v, 3) for v in vs] for k, vs in samples.items()},
               target=">= torch (graph and eager); host <= torch + 3 us")
    row["met"] = row["vs_reference"] >= 1.0 and row["eager_vs_reference"] >= 1.0 and row["host_extra_us"] <= 3.0
    add_row(**row)
    return row


ISSUE_KERNELS = ("softmax", "layer_norm", "sum(dim=-1)")  # issue_cases' rows, in order


def wanted(kernel: str, shape: tuple[int, ...]) -> bool:
    """Whether --only asks for this row: a pattern KERNEL@SHAPE matches rows whose
    kernel starts with KERNEL and whose shape is SHAPE (an empty part matches all)."""
    size = "x".join(map(str, shape))
    for pattern in ONLY:
        name, _, dims = pattern.partition("@")
        if kernel.startswith(name) and dims in ("", size):
            return True
    return not ONLY


def bench_issue_shapes(rounds: int) -> None:
    for rows, cols in ISSUE_SHAPES:
        if not any(wanted(name, (rows, cols)) for name in ISSUE_KERNELS):
            continue  # not even allocated
        for kernel, dtype, ours, reference, name in issue_cases(rows, cols):
            if wanted(kernel, (rows, cols)):
                issue_row(kernel, (rows, cols), dtype, ours, reference, name, rounds)
        torch.cuda.empty_cache()


# histogram, cumsum and the matmuls at sizes where the host cost shows (issue 15 item 5:
# their per-call path moved to plans); the same three timings as the issue-15 table
HOST_LABEL = "host"


def host_cases() -> list[tuple[str, tuple[int, ...], str, Callable[[], Any], Callable[[], Any], str]]:
    v = torch.randn(1 << 20, device="cuda")
    m = torch.randn(4096, 1024, device="cuda")
    a, b = (torch.randn(512, 512, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    bias = torch.randn(512, device="cuda", dtype=torch.bfloat16)
    return [
        ("histogram(256, range)", (1 << 20,), "float32", lambda: K.histogram(v, 256, range=(-4.0, 4.0)),
         lambda: torch.histc(v, 256, min=-4.0, max=4.0).long(), "torch.histc(...).long()"),
        ("cumsum(dim=-1)", (4096, 1024), "float32", lambda: K.cumsum(m, dim=-1), lambda: torch.cumsum(m, -1),
         "torch.cumsum"),
        ("matmul_bias_act gelu", (512, 512, 512), "bfloat16", lambda: K.matmul_bias_act(a, b, bias),
         lambda: F.gelu(torch.matmul(a, b) + bias), "torch unfused"),
        ("portagpu.matmul", (512, 512, 512), "bfloat16", lambda: portagpu.matmul(a, b), lambda: torch.matmul(a, b),
         "torch.matmul"),
    ]


def bench_host_rows(rounds: int) -> None:
    for kernel, shape, dtype, ours, reference, name in host_cases():
        if wanted(kernel, shape):
            issue_row(kernel, shape, dtype, ours, reference, name, rounds, label=HOST_LABEL)
    torch.cuda.empty_cache()


def print_issue_table(rows: list[dict[str, Any]], title: str = "issue 15") -> None:
    print(f"\n{title}: medians of interleaved rounds; us per call; ratios are torch / ours")
    header = (f"{'kernel':<12} {'shape':<11} {'dtype':<8} {'impl':<7} {'graph':>8} {'torch':>8} {'x':>6} "
              f"{'eager':>8} {'torch':>8} {'x':>6} {'host':>7} {'torch':>7} {'extra':>6} {'min':>6} {'torch':>6}  met")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['kernel'].rsplit(' [', 1)[0]:<12} {r['shape']:<11} {r['dtype']:<8} {r['impl']:<7} "
              f"{r['graph_us']:>8.2f} {r['ref_graph_us']:>8.2f} {r['vs_reference']:>5.2f}x "
              f"{r['eager_us']:>8.2f} {r['ref_eager_us']:>8.2f} {r['eager_vs_reference']:>5.2f}x "
              f"{r['host_us']:>7.2f} {r['ref_host_us']:>7.2f} {r['host_extra_us']:>+6.2f} "
              f"{r['host_min_us']:>6.2f} {r['ref_host_min_us']:>6.2f}  "
              f"{'yes' if r['met'] else 'NO'}")


# --- main ------------------------------------------------------------------------------
def print_table(rows: list[dict[str, Any]]) -> None:
    print()
    header = (f"{'kernel':<28} {'shape':<14} {'dtype':<9} {'impl':<22} {'ms':>8} {'GB/s|TF/s':>10} "
              f"{'vs copy':>8} {'vs ref':>7}  {'reference':<26} {'target':<12} met")
    print(header)
    print("-" * len(header))
    for r in rows:
        rate = r.get("GBps") or r.get("TFLOPs") or 0.0
        vs_copy = f"{r['vs_copy']:.1%}" if r.get("vs_copy") is not None else ""
        vs_ref = f"{r['vs_reference']:.2f}x" if r.get("vs_reference") else ""
        met = {True: "yes", False: "NO", None: ""}[r.get("met")]
        print(f"{r['kernel']:<28} {r['shape']:<14} {r['dtype']:<9} {r['impl']:<22} {r['ms']:>8.4f} {rate:>10.1f} "
              f"{vs_copy:>8} {vs_ref:>7}  {r.get('reference') or '':<26} {r.get('target') or '':<12} {met} {r.get('config') or ''}")


def write_json(path: str, payload: dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(payload, f, indent=1, default=str)
    os.replace(tmp, path)


def main() -> int:
    global DEVICE, OUT_PATH
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--sweep", action="store_true", help="also time candidate launch configs")
    parser.add_argument("--out", default="benchmarks/results/kernels_bench.json")
    parser.add_argument("--shapes-only", action="store_true", help="only the issue-15 and host tables")
    parser.add_argument("--shape-rounds", type=int, default=9, help="rounds of the issue-15 table")
    parser.add_argument("--only", action="append", default=[], metavar="KERNEL@SHAPE",
                        help="only these rows of the two tables (substrings, e.g. sum@4096x1024, @65536x128, "
                             "softmax); repeatable")
    args = parser.parse_args()
    ONLY[:] = args.only
    if not torch.cuda.is_available():
        print("kernels_bench needs a GPU (torch.cuda.is_available() is False)", file=sys.stderr)
        return 2
    device = portagpu.detect()
    DEVICE, OUT_PATH = device.name, args.out
    bench_issue_shapes(2 if args.quick else args.shape_rounds)
    bench_host_rows(2 if args.quick else args.shape_rounds)
    copy_gbs = None
    if not args.shapes_only:
        n = 1 << (24 if args.quick else 28)
        copy_gbs = copy_bandwidth(n)
        bench_elementwise_and_reductions(n, copy_gbs, args.sweep)
        bench_rows([256, 1024, 4096] if args.quick else [256, 512, 1024, 2048, 4096, 8192, 16384], copy_gbs,
                   args.sweep)
        bench_histogram_and_scan(1 << (24 if args.quick else 26), copy_gbs, args.sweep)
        bench_gemm([1024] if args.quick else [4096, 8192], args.sweep)
    measured = [r for r in ROWS if "error" not in r]
    print_issue_table([r for r in measured if r["kernel"].endswith("[issue 15]")])
    print_issue_table([r for r in measured if r["kernel"].endswith(f"[{HOST_LABEL}]")],
                      "histogram, cumsum, matmuls (issue 15 item 5)")
    print_table([r for r in measured if "[sweep]" not in r["kernel"] and not r["kernel"].endswith("[issue 15]")
                 and not r["kernel"].endswith(f"[{HOST_LABEL}]")])
    sweeps = [r for r in measured if "[sweep]" in r["kernel"]]
    if sweeps:
        print("\nsweeps (candidate configs):")
        print_table(sweeps)
    import triton

    write_json(args.out, {
        "device": device.to_dict(), "copy_GBps": copy_gbs, "quick": args.quick,
        "versions": {"torch": torch.__version__, "triton": triton.__version__,
                     "python": platform.python_version(), "portagpu": portagpu.__version__},
        "rows": ROWS,
    })
    for r in ROWS:
        if "error" in r:
            print(f"FAILED: {r['kernel']} {r['config']}: {r['error']}")
    print(f"\nwrote {args.out}")
    return 0


DEVICE = "?"
ONLY: list[str] = []
ROUNDS = 3
PAUSE_S = 0.05
OUT_PATH = ""

if __name__ == "__main__":
    sys.exit(main())
