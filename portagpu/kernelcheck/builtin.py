"""portagpu's own kernels, every row of kernels/tuning.yaml: `portagpu check-kernels --builtin`.

The specialisations are not written down a second time: each kernel family's
public function (portagpu.kernels.softmax, ...) is called on small CPU tensors
with the device it sees replaced by the target's vendor, at sizes that select
every row of the table (each `upto` and one past it, and each `max_fused_cols`
and one past it), and `portagpu.launch` is replaced by a recorder, so nothing
runs: what is recorded is exactly what each row would launch on that vendor.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from portagpu.kernelcheck.cuda_check import CudaSpec
from portagpu.kernelcheck.spec import KernelSpec, SpecSet, specs_of_call
from portagpu.kernelcheck.targets import Target

MULTIPROCESSORS = {"amd": 304, "nvidia": 132}  # MI300X CUs, H100 SMs: only grid sizes depend on it
ROW_SIZE_KEYS = ("max_fused_cols",)  # row values that switch code paths, like `upto`


def _drivers() -> dict[str, Callable[[int, Any, str], None]]:
    import torch

    import portagpu.kernels as K

    def rows(cols: int, dtype: Any) -> Any:
        return torch.zeros(1, cols, dtype=dtype)

    def matmul(mn: int, dtype: Any, impl: str) -> None:
        K.matmul_bias_act(
            torch.zeros(mn, 64, dtype=dtype),
            torch.zeros(64, mn, dtype=dtype),
            torch.zeros(mn, dtype=dtype),
            impl=impl,
        )

    return {
        "add": lambda n, dtype, impl: K.add(
            torch.zeros(n, dtype=dtype), torch.zeros(n, dtype=dtype), impl=impl
        ),
        "reduce": lambda n, dtype, impl: (
            K.sum(torch.zeros(n, dtype=dtype), impl=impl),
            K.max(torch.zeros(n, dtype=dtype), impl=impl),
        ),
        "reduce_rows": lambda cols, dtype, impl: (
            K.sum(rows(cols, dtype), dim=-1, impl=impl),
            K.max(rows(cols, dtype), dim=-1, impl=impl),
        ),
        "softmax": lambda cols, dtype, impl: K.softmax(rows(cols, dtype), impl=impl),
        "layer_norm": lambda cols, dtype, impl: K.layer_norm(
            rows(cols, dtype),
            (cols,),
            torch.ones(cols, dtype=dtype),
            torch.zeros(cols, dtype=dtype),
            impl=impl,
        ),
        "histogram": lambda n, dtype, impl: (
            K.histogram(torch.arange(n, dtype=dtype), bins=256, impl=impl),
            K.histogram(torch.arange(n, dtype=dtype), bins=5000, impl=impl),
        ),
        "cumsum": lambda cols, dtype, impl: K.cumsum(rows(cols, dtype), impl=impl),
        "matmul_bias_act": matmul,
    }


# tl.dot tiles: shared memory and registers depend on the element type; the other
# families are checked in float32 (fp16/bf16 change their loads, not their shape)
DTYPES = {"matmul_bias_act": ("float16", "bfloat16", "float32")}


DEFAULT_SIZE = 1 << 20  # a table with one row for every size


def row_sizes(rows: list[dict[str, Any]]) -> list[int]:
    """One problem size per row (its `upto`; the last row: one past the row
    before), plus each `max_fused_cols` and one past it (fused vs looped)."""
    sizes = set()
    previous = 0
    for row in rows:
        sizes.add(
            int(row["upto"])
            if "upto" in row
            else max(previous + 1, 1 if previous else DEFAULT_SIZE)
        )
        previous = int(row.get("upto", previous))
        for key in ROW_SIZE_KEYS:
            if key in row:
                sizes |= {int(row[key]), int(row[key]) + 1}
    return sorted(sizes)


@contextlib.contextmanager
def _as_vendor(target: Target) -> Iterator[None]:
    """Kernel families see a GPU of `target`'s vendor (its tuning rows and defaults)."""
    from portagpu import device as device_module

    fake = device_module.Device(
        vendor=target.vendor,
        backend=target.portagpu_backend,
        index=0,
        name=target.description,
        arch=target.name,
        warp_size=target.warp_size,
        multiprocessors=MULTIPROCESSORS[target.vendor],
        memory_total=None,
        blas="",
        source="portagpu kernelcheck",
    )
    real = device_module.device_of
    modules = [
        m
        for name, m in list(sys.modules.items())
        if name.startswith("portagpu.kernels") and getattr(m, "device_of", None) is real
    ]
    for module in modules:
        module.device_of = lambda tensor: fake
    try:
        yield
    finally:
        for module in modules:
            module.device_of = real


class _LaunchRecorder:
    """Stands in for portagpu.launch: records, launches nothing."""

    def __init__(self) -> None:
        self.specs = SpecSet()
        self.cuda: dict[str, CudaSpec] = {}
        self.origin = ""

    def __call__(
        self,
        kernel: Any,
        grid: Any,
        *args: Any,
        num_warps: int | None = None,
        block: Any = None,
        stream: Any = None,
        **meta: Any,
    ) -> None:
        if type(kernel).__name__ == "CudaKernel":
            dims = tuple(int(b) for b in (*(block or (256,)), 1, 1)[:3])
            spec = CudaSpec(
                name=kernel.name,
                source=kernel.source,
                options=tuple(kernel.options),
                block=dims,
                shared_mem=int(meta.get("shared_mem", 0)),
                file=_cuda_file(kernel),
                line=1,
                origin=self.origin,
            )
            self.cuda.setdefault(spec.identity(), spec)
            return
        for spec in specs_of_call(
            kernel, args, {**meta, "num_warps": num_warps}, warp_units=True, origin=self.origin
        ):
            self.specs.add(spec)


def _cuda_file(kernel: Any) -> str:
    from importlib import resources

    from portagpu.kernels import _cuda

    for name in ("histogram.cu", "reduce.cu", "scan.cu"):
        if _cuda.source(name) == kernel.source:
            return str(resources.files("portagpu.kernels") / _cuda.CUDA_DIR / name)
    return "<CUDA source>"


def record_rows(target: Target) -> tuple[list[KernelSpec], list[CudaSpec], list[str]]:
    """Every tuning row's launches on `target`'s vendor: (Triton specs, CUDA specs, notes)."""
    import torch

    import portagpu
    from portagpu.errors import LaunchError
    from portagpu.kernels import _tuning

    recorder = _LaunchRecorder()
    drivers = _drivers()
    notes: list[str] = []
    real_launch = portagpu.launch
    portagpu.launch = recorder
    prepared = _record_prepared_launches(recorder)
    try:
        with _as_vendor(target):
            for name, entry in _tuning.table().items():
                driver = drivers.get(name)
                if driver is None:
                    notes.append(
                        f"tuning.yaml kernel {name!r} has no driver in portagpu.kernelcheck.builtin: "
                        "not checked"
                    )
                    continue
                rows = entry.get(target.vendor) or entry["default"]
                row_of = {id(r): i for i, r in enumerate(rows)}
                for size in row_sizes(rows):
                    chosen = _tuning.config(name, target.vendor, size)
                    index = next(
                        (
                            row_of[id(r)]
                            for r in rows
                            if {k: v for k, v in r.items() if k != "upto"} == chosen
                        ),
                        "?",
                    )
                    section = target.vendor if entry.get(target.vendor) else "default"
                    for dtype in DTYPES.get(name, ("float32",)):
                        for impl in ("triton", "cuda"):
                            recorder.origin = (
                                f"tuning.yaml {name}.{section}[{index}] size={size} {dtype}"
                            )
                            try:
                                driver(size, getattr(torch, dtype), impl)
                            except LaunchError:
                                continue  # this family has no such implementation for this dtype
    finally:
        portagpu.launch = real_launch
        prepared()
    return list(recorder.specs), list(recorder.cuda.values()), notes


def _record_prepared_launches(recorder: _LaunchRecorder) -> Any:
    """portagpu.kernels also launch through plans made by `prepare_launch`
    (imported by name into each kernel module): swap it for one that records,
    with no plan cached before or after. Returns the function that undoes it."""
    import sys

    from portagpu.kernels import _dispatch
    from portagpu.runtime import dispatch

    real = dispatch.prepare_launch

    def recording(
        kernel: Any,
        grid: tuple,
        args: tuple,
        varying: tuple[int, ...],
        num_warps: int | None = None,
        meta: dict | None = None,
        device: Any = None,
        *,
        trusted: bool = False,
    ) -> Any:
        def go(*tensors: Any) -> None:
            full = list(args)
            for position, value in zip(varying, tensors, strict=True):
                full[position] = value
            recorder(kernel, grid, *full, num_warps=num_warps, **dict(meta or {}))

        return go

    modules = [
        m
        for name, m in list(sys.modules.items())
        if name.startswith("portagpu.kernels.") and getattr(m, "prepare_launch", None) is real
    ]
    for module in modules:
        module.prepare_launch = recording
    _dispatch.forget_plans()

    def undo() -> None:
        for module in modules:
            module.prepare_launch = real
        _dispatch.forget_plans()

    return undo
