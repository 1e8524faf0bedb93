"""What this machine can compile with, found without importing the compilers:
Triton (version, AMD and NVIDIA backends), hipcc and nvcc. A missing piece is
reported with the targets it leaves unchecked; it never becomes a pass."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass
from functools import cache
from importlib import metadata

# Triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget(...))
# with path-keyed constexprs, the offline shape the worker uses, is Triton 3.3+;
# this project exercises Triton 3.9.
MIN_TRITON = (3, 3)


@dataclass(frozen=True)
class Toolchain:
    triton: str | None  # version, None when not installed
    triton_problem: str  # why Triton cannot be used, "" when it can
    families: frozenset[str]  # Triton backends present: "cuda", "hip"
    hipcc: str | None
    nvcc: str | None

    def triton_skip_reason(self, vendor: str) -> str:
        """Why Triton kernels cannot be checked for this vendor's targets ("" if they can)."""
        if self.triton_problem:
            return self.triton_problem
        family = "hip" if vendor == "amd" else "cuda"
        if family not in self.families:
            return (
                f"this Triton {self.triton} has no {'AMD (hip)' if family == 'hip' else 'NVIDIA (cuda)'} "
                "backend installed"
            )
        return ""


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


@cache
def toolchain() -> Toolchain:
    version = None
    for dist in ("triton", "pytorch-triton-rocm", "pytorch-triton", "triton-nightly"):
        try:
            version = metadata.version(dist)
            break
        except metadata.PackageNotFoundError:
            continue
    problem = ""
    families: set[str] = set()
    if importlib.util.find_spec("triton") is None:
        problem = "Triton is not installed (pip install triton): Triton kernels were not compiled"
    else:
        version = version or "unknown"
        if version != "unknown" and _version_tuple(version) < MIN_TRITON:
            problem = (
                f"Triton {version} is too old for the offline compile check "
                f"(needs {'.'.join(map(str, MIN_TRITON))}+): Triton kernels were not compiled"
            )
        for family, module in (
            ("hip", "triton.backends.amd.compiler"),
            ("cuda", "triton.backends.nvidia.compiler"),
        ):
            try:
                if importlib.util.find_spec(module) is not None:
                    families.add(family)
            except (ImportError, ValueError):
                continue
    return Toolchain(
        triton=version,
        triton_problem=problem,
        families=frozenset(families),
        hipcc=shutil.which("hipcc"),
        nvcc=shutil.which("nvcc"),
    )
