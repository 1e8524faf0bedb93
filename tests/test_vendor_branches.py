"""Vendor facts live in portagpu/backends/<vendor>/ only.

Everything else asks the Device or its backend (`backend_for(device)`), so a
new vendor is a new backends/<name>/ package plus one entry-point line. This
test fails when code outside portagpu/backends/ branches on the running vendor:
a comparison or membership test against a vendor or backend name
(`device.backend == "rocm"`, `kind in ("cuda", "mps")`), a list of vendors
(`BACKENDS = ("cuda", "rocm", ...)`: the registry knows them), or a look at
`torch.version.hip` / CuPy's `is_hip`.

Out of scope, on purpose: portagpu/lint/, portagpu/cuda/ and hipify_bridge/.
They analyse and translate the USER's code (the rule catalogue and checkers
must name "cuda", "hip", `torch.version.hip` to find them); they never branch
on the vendor portagpu is running on.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = [ROOT / "portagpu", ROOT / "kernels"]  # kernels/ installs as portagpu.kernels
EXEMPT = [
    ROOT / "portagpu" / "backends",
    ROOT / "portagpu" / "lint",
    ROOT / "portagpu" / "cuda",
    ROOT / "hipify_bridge",
]

VENDOR_NAMES = frozenset(
    {"nvidia", "amd", "apple", "intel", "cpu", "cuda", "rocm", "hip", "mps", "xpu", "metal"}
)
VENDOR_ATTRIBUTES = frozenset({"hip", "is_hip"})  # torch.version.hip, cupy.cuda.runtime.is_hip
# Names compared with kernel *languages*, which share a word with a backend:
# portagpu.kernels' impl is "triton", "cuda" (CUDA C) or "torch", on any vendor.
NOT_VENDOR_SUBJECTS = frozenset({"impl"})


def _names_vendor(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.lower() in VENDOR_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_vendor(element) for element in node.elts)
    return False


def vendor_branches(source: str) -> list[tuple[int, str]]:
    """(line, what) for each vendor branch in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            subjects = [o for o in operands if not _names_vendor(o)]
            if len(subjects) < len(operands) and not any(
                isinstance(s, ast.Name) and s.id in NOT_VENDOR_SUBJECTS for s in subjects
            ):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Attribute) and node.attr in VENDOR_ATTRIBUTES:
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            elements = node.keys if isinstance(node, ast.Dict) else node.elts
            if sum(1 for e in elements if e is not None and _names_vendor(e)) >= 2:
                found.append((node.lineno, ast.unparse(node)))
    return found


def _scanned_files() -> list[Path]:
    files = []
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            if not any(path.is_relative_to(exempt) for exempt in EXEMPT):
                files.append(path)
    return files


@pytest.mark.parametrize(
    "snippet",
    [
        'if device.backend == "rocm": pass',
        'x = "amd" != vendor',
        'ok = kind in ("cuda", "mps")',
        "hip = torch.version.hip",
        "flag = cupy.cuda.runtime.is_hip",
        'label = "rocm" if torch.version.hip else "cuda"',
        'BACKENDS = ("cuda", "rocm", "mps", "cpu")',
        'VENDOR = {"cuda": "nvidia", "rocm": "amd"}',
    ],
)
def test_the_check_finds_vendor_branches(snippet):
    assert vendor_branches(snippet)


@pytest.mark.parametrize(
    "snippet",
    [
        'if impl == "cuda": pass',  # a kernel language, not the vendor
        'if backend.triton_mode == "native": pass',
        "device = backend.torch_device(0)",
        'x = {"cuda": 1}',
        'impls = ("triton", "cuda", "torch")',
    ],
)
def test_the_check_leaves_other_code_alone(snippet):
    assert not vendor_branches(snippet)


def test_the_scan_covers_the_runtime_kernels_and_plugin():
    scanned = {path.relative_to(ROOT).as_posix() for path in _scanned_files()}
    for expected in (
        "portagpu/device.py",
        "portagpu/pytest_plugin.py",
        "portagpu/runtime/blas.py",
        "portagpu/runtime/triton_launch.py",
        "kernels/_dispatch.py",
        "kernels/_tuning.py",
    ):
        assert expected in scanned
    assert not any(name.startswith(("portagpu/backends/", "portagpu/lint/")) for name in scanned)


def test_no_vendor_branches_outside_backends():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in _scanned_files()
        for line, text in vendor_branches(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "ask the Device's backend instead:\n" + "\n".join(offenders)
