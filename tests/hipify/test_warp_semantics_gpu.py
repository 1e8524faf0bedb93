"""On an NVIDIA GPU: the translated kernels of test_warp_semantics, compiled for
NVIDIA with PORTAGPU_WARP_SIZE=32 (the compat header's CUDA path), give the
original kernels' answers. The wave64 side of the same kernels is covered by
the lane simulation in test_warp_semantics (no AMD GPU here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from portagpu.hipify_bridge import translate

_spec = importlib.util.spec_from_file_location(
    "hipify_warp_cases", Path(__file__).with_name("test_warp_semantics.py")
)
cases = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("hipify_warp_cases", cases)
_spec.loader.exec_module(cases)

pytestmark = pytest.mark.cuda

KERNELS = [
    (cases.BLOCK_SUM_GENERIC, "block_sum", "native", {"out": (cases.GRID, np.float32)}, {}),
    (cases.BLOCK_SUM_32_SLOTS, "block_sum", "logical32", {"out": (cases.GRID, np.float32)}, {}),
    (cases.XOR_SUM, "block_sum_xor", "native", {"out": (cases.GRID, np.float32)}, {}),
    (cases.BALLOT_COUNT, "count_positive", "native", {"count": (1, np.int32)}, {}),
    (
        cases.BALLOT_PER_WARP,
        "votes_per_warp",
        "logical32",
        {"out": (cases.BLOCK * cases.GRID // 32, np.int32)},
        {},
    ),
    (
        cases.BLOCK_SCAN,
        "block_scan",
        "logical32",
        {"out": (cases.BLOCK * cases.GRID, np.float32)},
        {},
    ),
    (
        cases.BLOCK_SCAN_GENERIC,
        "block_scan",
        "native",
        {"out": (cases.BLOCK * cases.GRID, np.float32)},
        {},
    ),
    (
        cases.ANY_GUARD,
        "any_negative",
        "logical32",
        {"out": (cases.BLOCK * cases.GRID // 32, np.int32)},
        {"block": 128, "grid": 4},
    ),
]


def _device_only(text: str) -> str:
    """NVRTC compiles device code: drop the cases' host launchers (a `void` function
    at column 0 through its closing brace at column 0)."""
    kept: list[str] = []
    in_host = False
    for line in text.split("\n"):
        if not in_host and line.startswith("void "):
            in_host = not line.rstrip().endswith("}")
            continue
        if in_host:
            in_host = line != "}"
            continue
        kept.append(line)
    return "\n".join(kept)


def _run(cupy, source: str, kernel: str, outputs: dict, block: int, grid: int) -> dict:
    module = cupy.RawModule(
        code=_device_only(source), options=("-std=c++17",), name_expressions=[kernel]
    )
    function = module.get_function(kernel)
    x = cupy.asarray(cases.X.astype(np.float32))
    outs = {name: cupy.zeros(size, dtype=dtype) for name, (size, dtype) in outputs.items()}
    function((grid,), (block,), (x, *outs.values()))
    return {name: cupy.asnumpy(value) for name, value in outs.items()}


@pytest.mark.parametrize(
    ("source", "kernel", "model", "outputs", "launch"),
    KERNELS,
    ids=[f"{k[1]}-{k[2]}" for k in KERNELS],
)
def test_translation_compiled_for_nvidia_gives_the_originals_answer(
    source, kernel, model, outputs, launch
):
    cupy = pytest.importorskip("cupy")
    tr = translate(source, engine="builtin", warp_size=32)
    assert {m["function"]: m["model"] for m in tr.report.warp_models}[kernel] == model
    block, grid = launch.get("block", cases.BLOCK), launch.get("grid", cases.GRID)
    expected = _run(cupy, source, kernel, outputs, block, grid)
    got = _run(cupy, tr.text, kernel, outputs, block, grid)
    for name in outputs:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-6)
