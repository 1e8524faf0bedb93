"""API renaming engines: ROCm's hipify-perl / hipify-clang when installed,
else PyTorch's tables (torch.utils.hipify), else a small built-in table.

Each engine returns the renamed text and what it renamed; the warp fixes and
the honest report are done around it (see translate.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from portagpu.errors import PortagpuError

ENGINES = ("auto", "hipify-perl", "hipify-clang", "torch", "builtin")


class EngineUnavailable(PortagpuError):
    """The engine asked for is not installed here."""


@dataclass
class EngineResult:
    text: str
    converted: Counter = field(default_factory=Counter)  # CUDA name -> replacements
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- ROCm's own tools ---------------------------------------------------------

_PERL_WARNING = re.compile(r":(\d+): warning: (.*)")


def _run_tool(argv: list[str], text: str, suffix: str = ".cu") -> tuple[str, str, int]:
    with tempfile.TemporaryDirectory(prefix="portagpu-hipify-") as tmp:
        src = os.path.join(tmp, "input" + suffix)
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(text)
        proc = subprocess.run([*argv, src], capture_output=True, text=True, timeout=300)
    return proc.stdout, proc.stderr, proc.returncode


def run_hipify_perl(text: str) -> EngineResult:
    exe = shutil.which("hipify-perl")
    if exe is None:
        raise EngineUnavailable("hipify-perl is not on PATH (it ships with ROCm)")
    out, err, rc = _run_tool([exe, "-print-stats"], text)
    if rc != 0:
        raise EngineUnavailable(f"hipify-perl failed (exit {rc}): {err.strip()[:200]}")
    result = EngineResult(out)
    for line in err.splitlines():
        match = _PERL_WARNING.search(line)
        if match:
            result.warnings.append(f"line {match.group(1)}: {match.group(2)}")
        elif line.strip():
            result.notes.append(line.strip())
    return result


def run_hipify_clang(text: str) -> EngineResult:
    exe = shutil.which("hipify-clang")
    if exe is None:
        raise EngineUnavailable("hipify-clang is not on PATH (it ships with ROCm)")
    with tempfile.TemporaryDirectory(prefix="portagpu-hipify-") as tmp:
        src, dst = os.path.join(tmp, "input.cu"), os.path.join(tmp, "output.hip")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(text)
        proc = subprocess.run([exe, src, "-o", dst, "-print-stats", "--", "-std=c++17"],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 or not os.path.exists(dst):
            raise EngineUnavailable(
                f"hipify-clang failed (exit {proc.returncode}): {proc.stderr.strip()[:200]}")
        with open(dst, encoding="utf-8") as fh:
            result = EngineResult(fh.read())
    result.notes += [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    return result


# --- PyTorch's tables -----------------------------------------------------------

@lru_cache(maxsize=1)
def torch_tables() -> tuple[re.Pattern[str], dict[str, str]]:
    """PyTorch's hipify map and a regex that renames as its own does; cached per
    torch version in the user's cache folder (torch_tables.py), so only the
    first run imports torch."""
    from portagpu.hipify_bridge import torch_tables as cache

    try:
        return cache.load()
    except ImportError as exc:
        raise EngineUnavailable(
            f"PyTorch's hipify tables need torch ({exc}); install portagpu[torch] or ROCm's hipify-perl"
        ) from None


def _rename(text: str, pattern: re.Pattern[str], table: dict[str, str]) -> tuple[str, Counter]:
    converted: Counter = Counter()

    def repl(match: re.Match[str]) -> str:
        name = match.group(0)
        new = table.get(name, name)
        if new != name:
            converted[name] += 1
        return new

    # the tables' regex needs a non-word character before a name: a name at the very
    # start of the text would be missed, hence the leading newline.
    return pattern.sub(repl, "\n" + text)[1:], converted


def run_torch(text: str) -> EngineResult:
    pattern, table = torch_tables()
    renamed, converted = _rename(text, pattern, table)
    result = EngineResult(renamed, converted)
    result.notes.append("PyTorch's tables also rename inside comments and string literals")
    return result


# --- built-in fallback ------------------------------------------------------------

BUILTIN_TABLE = {
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cuda_runtime_api.h": "hip/hip_runtime_api.h",
    "cuda.h": "hip/hip_runtime.h",
    "cuda_fp16.h": "hip/hip_fp16.h",
    "cuda_bf16.h": "hip/hip_bf16.h",
    "cooperative_groups.h": "hip/hip_cooperative_groups.h",
    "cub/cub.cuh": "hipcub/hipcub.hpp",
    "cub::": "hipcub::",
    "cudaError_t": "hipError_t",
    "cudaSuccess": "hipSuccess",
    "cudaGetLastError": "hipGetLastError",
    "cudaGetErrorString": "hipGetErrorString",
    "cudaMalloc": "hipMalloc",
    "cudaMallocManaged": "hipMallocManaged",
    "cudaFree": "hipFree",
    "cudaMemcpy": "hipMemcpy",
    "cudaMemcpyAsync": "hipMemcpyAsync",
    "cudaMemset": "hipMemset",
    "cudaMemcpyHostToDevice": "hipMemcpyHostToDevice",
    "cudaMemcpyDeviceToHost": "hipMemcpyDeviceToHost",
    "cudaMemcpyDeviceToDevice": "hipMemcpyDeviceToDevice",
    "cudaDeviceSynchronize": "hipDeviceSynchronize",
    "cudaStream_t": "hipStream_t",
    "cudaStreamCreate": "hipStreamCreate",
    "cudaStreamDestroy": "hipStreamDestroy",
    "cudaStreamSynchronize": "hipStreamSynchronize",
    "cudaEvent_t": "hipEvent_t",
    "cudaEventCreate": "hipEventCreate",
    "cudaEventRecord": "hipEventRecord",
    "cudaEventSynchronize": "hipEventSynchronize",
    "cudaEventElapsedTime": "hipEventElapsedTime",
    "cudaSetDevice": "hipSetDevice",
    "cudaGetDevice": "hipGetDevice",
    "cudaGetDeviceCount": "hipGetDeviceCount",
    "cudaDeviceProp": "hipDeviceProp_t",
    "cudaGetDeviceProperties": "hipGetDeviceProperties",
    "cudaFuncSetAttribute": "hipFuncSetAttribute",
    "cudaLaunchKernel": "hipLaunchKernel",
}


@lru_cache(maxsize=1)
def _builtin_pattern() -> re.Pattern[str]:
    names = sorted(BUILTIN_TABLE, key=len, reverse=True)
    # a name ending in a word character must end there (cudaMalloc, not cudaMallocHost)
    alternatives = [re.escape(n) + (r"(?!\w)" if n[-1].isalnum() or n[-1] == "_" else "")
                    for n in names]
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")")


def run_builtin(text: str) -> EngineResult:
    renamed, converted = _rename(text, _builtin_pattern(), BUILTIN_TABLE)
    result = EngineResult(renamed, converted)
    result.notes.append(
        f"built-in table ({len(BUILTIN_TABLE)} names: headers, memory, streams, events, cub); "
        "install ROCm's hipify-perl or torch for the full tables")
    return result


RUNNERS = {
    "hipify-perl": run_hipify_perl,
    "hipify-clang": run_hipify_clang,
    "torch": run_torch,
    "builtin": run_builtin,
}


def torch_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def pick_engine(engine: str = "auto") -> str:
    """The engine `auto` means here: hipify-perl, hipify-clang, torch, builtin."""
    if engine not in ENGINES:
        raise EngineUnavailable(f"unknown hipify engine {engine!r}; one of {', '.join(ENGINES)}")
    if engine != "auto":
        return engine
    if shutil.which("hipify-perl"):
        return "hipify-perl"
    if shutil.which("hipify-clang"):
        return "hipify-clang"
    if torch_importable():
        return "torch"
    return "builtin"
