"""The same check for CUDA C source kernels (`portagpu.CudaKernel`, .cu files):
AMD targets through hipify_bridge (translate, then its hipcc compile check),
NVIDIA targets through nvcc. Registers, spills, static shared memory/LDS and
occupancy come from the compilers' own reports (hipcc
-Rpass-analysis=kernel-resource-usage; ptxas -v).

Limits that differ from Triton's: a CUDA-source launch on NVIDIA gets 48 KiB of
shared memory per block (static + dynamic) unless the kernel opts in to more
with cudaFuncSetAttribute(MaxDynamicSharedMemorySize), which portagpu.CudaKernel
does not do [CUDA-CC, "Shared Memory"]; `__launch_bounds__(N)` caps the block at N
threads. Debian's hipcc (HIP 5.2, clang 15) lacks gfx942 (it has gfx940, the same
CDNA3 ISA, used in its place and said so) and gfx1100's device libraries (not
checked, said so).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any

from portagpu.kernelcheck import verdict
from portagpu.kernelcheck.cache import CompileCache, key_of
from portagpu.kernelcheck.targets import KIB, Target
from portagpu.kernelcheck.toolchain import toolchain

NVIDIA_DEFAULT_SHARED = 48 * KIB  # without the opt-in attribute
HIPCC_STAND_INS = {"gfx942": "gfx940", "gfx941": "gfx940"}  # same CDNA3 ISA, older clang names
_REMARK = re.compile(
    r"remark:\s+(?P<key>[A-Za-z][\w ]*?(?: \[[^\]]+\])?):\s*(?P<value>\S+)\s*\[-Rpass-analysis"
)
_PTXAS_ENTRY = re.compile(r"(?:Compiling entry function|Function properties for) '?([\w$]+)'?")
_PTXAS_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")
_PTXAS_SPILL = re.compile(r"(\d+) bytes spill stores")
_LAUNCH_BOUNDS = (
    r"__launch_bounds__\s*\(\s*(\d+)[^)]*\)\s*(?:void\s+)?{name}\s*\("  # before or after `void`
)
_GLOBAL = re.compile(
    r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+"
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\("
)


@dataclass(frozen=True)
class CudaSpec:
    """One launch shape of one CUDA C kernel."""

    name: str
    source: str
    options: tuple[str, ...] = ()
    block: tuple[int, int, int] | None = None  # None: not known (a .cu file checked alone)
    shared_mem: int = 0  # dynamic shared memory per block, bytes
    file: str = "<string>"
    line: int = 1
    origin: str = ""

    def identity(self) -> str:
        data = repr(
            (
                self.name,
                hashlib.sha256(self.source.encode()).hexdigest(),
                self.options,
                self.block,
                self.shared_mem,
            )
        )
        return hashlib.sha256(data.encode()).hexdigest()[:24]

    def label(self) -> str:
        parts = []
        if self.block is not None:
            parts.append(
                "block=" + "x".join(str(b) for b in self.block if b != 1 or self.block == (1, 1, 1))
            )
        if self.shared_mem:
            parts.append(f"dynamic shared={self.shared_mem} B")
        return " ".join(parts) or "(block size set at launch)"


def _threads(block: tuple[int, int, int] | None) -> int | None:
    if block is None:
        return None
    total = 1
    for b in block:
        total *= int(b)
    return total


def _defines(target: Target) -> list[str]:
    # as portagpu.runtime.cuda_source.cupy_raw_module does for the device
    return [f"-DWARP_SIZE={target.warp_size}", f"-DPORTAGPU_WARP_SIZE={target.warp_size}"]


@cache
def _compiler_version(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = [line for line in out.splitlines() if line.strip()]
    return " / ".join(lines[-2:]) if lines else "unknown"


def _compile_for(source: str, options: tuple[str, ...], target: Target) -> dict[str, Any]:
    """Facts for every kernel of `source` on `target`: {"compiled", "error", "kernels": {...}}."""
    from portagpu.hipify_bridge import compile_check

    with tempfile.TemporaryDirectory(prefix="portagpu-kernelcheck-") as tmp:
        if target.vendor == "amd":
            from portagpu.hipify_bridge import translate

            text = translate(source, warp_size=target.warp_size).text
            path = os.path.join(tmp, "kernel.hip")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            flags = [
                *_defines(target),
                "-Rpass-analysis=kernel-resource-usage",
                *[o for o in options if o.startswith(("-D", "-I"))],
            ]
            arch, note = target.name, ""
            result = compile_check.compile_hip(
                path, arch, text, flags=compile_check.CompileFlags(extra=tuple(flags))
            )
            if (
                result.status == "failed"
                and "invalid target ID" in result.log
                and arch in HIPCC_STAND_INS
            ):
                arch = HIPCC_STAND_INS[arch]
                note = (
                    f"compiled as {arch}: this hipcc's clang predates the name {target.name} "
                    "(same CDNA3 ISA)"
                )
                result = compile_check.compile_hip(
                    path, arch, text, flags=compile_check.CompileFlags(extra=tuple(flags))
                )
            facts: dict[str, Any] = {
                "compiler": f"hipcc {_compiler_version('hipcc')}",
                "note": note,
                "seconds": result.seconds,
            }
            if result.status == "failed" and (
                "invalid target ID" in result.log or "cannot find ROCm device library" in result.log
            ):
                return {
                    **facts,
                    "not_checkable": f"hipcc here cannot compile for {target.name}: {result.detail}",
                }
            if result.status != "ok":
                return {**facts, "compiled": False, "error": result.detail}
            return {**facts, "compiled": True, "kernels": _hipcc_resources(result.log)}
        path = os.path.join(tmp, "kernel.cu")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        flags = [
            f"-arch=sm_{target.triton_arch}",
            "-Xptxas",
            "-v",
            *_defines(target),
            *[o for o in options if o.startswith(("-D", "-I"))],
        ]
        result = compile_check.compile_cuda(
            path, flags=compile_check.CompileFlags(extra=tuple(flags))
        )
        facts = {"compiler": f"nvcc {_compiler_version('nvcc')}", "seconds": result.seconds}
        if result.status == "failed" and "Unsupported gpu architecture" in result.log:
            return {
                **facts,
                "not_checkable": f"nvcc here cannot compile for {target.name}: {result.detail}",
            }
        if result.status != "ok":
            return {**facts, "compiled": False, "error": result.detail}
        return {**facts, "compiled": True, "kernels": _ptxas_resources(result.log)}


def _hipcc_resources(log: str) -> dict[str, dict[str, int]]:
    kernels: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in log.splitlines():
        match = _REMARK.search(line)
        if not match:
            continue
        key, value = match.group("key").strip(), match.group("value")
        if key == "Function Name":
            current = kernels.setdefault(value, {})
            continue
        if current is None or not value.isdigit():
            continue
        name = {
            "SGPRs": "sgpr",
            "VGPRs": "vgpr",
            "AGPRs": "agpr",
            "ScratchSize [bytes/lane]": "scratch",
            "Occupancy [waves/SIMD]": "occupancy",
            "SGPRs Spill": "sgpr_spill",
            "VGPRs Spill": "vgpr_spill",
            "LDS Size [bytes/block]": "lds",
        }.get(key)
        if name:
            current[name] = int(value)
    return kernels


def _ptxas_resources(log: str) -> dict[str, dict[str, int]]:
    kernels: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in log.splitlines():
        entry = _PTXAS_ENTRY.search(line)
        if entry:
            current = kernels.setdefault(entry.group(1), {})
        if current is None:
            continue
        spill = _PTXAS_SPILL.search(line)
        if spill:
            current["spill_bytes"] = int(spill.group(1))
        used = _PTXAS_USED.search(line)
        if used:
            current["regs"] = int(used.group(1))
            current["lds"] = int(used.group(2) or 0)
    return kernels


def _find_kernel(kernels: dict[str, dict[str, int]], name: str) -> dict[str, int] | None:
    """The entry for `name`: unmangled (extern "C") or Itanium-mangled (_Z<len><name>...)."""
    if name in kernels:
        return kernels[name]
    prefix = f"_Z{len(name)}{name}"
    return next((v for k, v in kernels.items() if k.startswith(prefix)), None)


def judge_cuda(
    spec: CudaSpec, target: Target, facts: dict[str, Any], *, cached: bool
) -> verdict.Check:
    check = verdict.Check(
        kernel=f"CUDA:{spec.name}",
        name=spec.name,
        file=spec.file,
        line=spec.line,
        spec=spec.label(),
        mode="fixed",
        config="",
        group=spec.identity(),
        origin=spec.origin,
        target=target.name,
        status=verdict.NOT_CHECKED,
        max_threads=target.max_threads,
        cached=cached,
        seconds=float(facts.get("seconds") or 0.0),
    )
    limit = target.max_shared if target.vendor == "amd" else NVIDIA_DEFAULT_SHARED
    check.max_shared = limit
    if facts.get("not_checkable"):
        check.detail = facts["not_checkable"]
        return check
    if not facts.get("compiled"):
        check.status, check.outcome = verdict.COMPILE_ERROR, "compiling the kernel fails"
        check.reasons, check.detail = ["does not compile"], facts.get("error", "")
        return check
    found = _find_kernel(facts.get("kernels") or {}, spec.name)
    notes = [facts["note"]] if facts.get("note") else []
    threads = _threads(spec.block)
    bounds = re.search(_LAUNCH_BOUNDS.format(name=re.escape(spec.name)), spec.source)
    if bounds:
        check.max_threads = min(target.max_threads, int(bounds.group(1)))
    check.threads = threads
    reasons = []
    if threads is not None and threads > check.max_threads:
        why = (
            "__launch_bounds__" if bounds and check.max_threads < target.max_threads else "a block"
        )
        reasons.append(f"{threads} threads per block > {check.max_threads} ({why})")
    if found is None:
        notes.append("the compiler reported no resources for this kernel")
    else:
        check.shared = found.get("lds", 0) + spec.shared_mem
        if target.vendor == "amd":
            check.registers = {k: found[k] for k in ("vgpr", "agpr", "sgpr") if k in found}
            check.spills = found.get("vgpr_spill", 0) + found.get("sgpr_spill", 0)
            check.occupancy, check.occupancy_unit = found.get("occupancy"), "waves/SIMD (LLVM)"
        else:
            check.registers = {"regs": found["regs"]} if "regs" in found else {}
            check.spills = found.get("spill_bytes", 0) // 4
        if check.shared > limit:
            what = "LDS" if target.vendor == "amd" else "shared memory (no opt-in above 48 KiB)"
            reasons.append(f"{check.shared} B of {what} > {limit} B per block")
    if check.spills:
        notes.append(f"spills {check.spills} registers")
    check.detail = "; ".join(notes)
    if reasons:
        check.status, check.reasons = verdict.DOES_NOT_FIT, reasons
        check.outcome = "launch fails"
    else:
        check.status = verdict.FITS
    return check


def check_cuda_specs(
    specs: list[CudaSpec],
    targets: list[Target],
    *,
    cache: CompileCache | None = None,
    workers: int = 2,
) -> list[verdict.Check]:
    """One Check per (spec, target); each source is compiled once per target."""
    tools = toolchain()
    needed: dict[str, tuple[str, tuple[str, ...], Target]] = {}
    keys: dict[tuple[int, str], str] = {}
    skipped: dict[str, str] = {}
    for target in targets:
        tool = tools.hipcc if target.vendor == "amd" else tools.nvcc
        if tool is None:
            skipped[target.name] = (
                "hipcc is not on PATH (apt-get install -y --no-install-recommends hipcc)"
                if target.vendor == "amd"
                else "nvcc is not on PATH (install the CUDA toolkit)"
            )
            continue
        for i, spec in enumerate(specs):
            key = key_of(
                "cuda-source",
                hashlib.sha256(spec.source.encode()).hexdigest(),
                spec.options,
                target.name,
                _compiler_version(tool),
            )
            keys[(i, target.name)] = key
            needed.setdefault(key, (spec.source, spec.options, target))
    facts_by_key: dict[str, tuple[dict[str, Any], bool]] = {}
    missing = []
    for key in needed:
        found = cache.get(key) if cache is not None else None
        if found is not None:
            facts_by_key[key] = (found, True)
        else:
            missing.append(key)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for key, facts in zip(
            missing, pool.map(lambda k: _compile_for(*needed[k]), missing), strict=True
        ):
            facts_by_key[key] = (facts, False)
            if cache is not None and not facts.get("not_checkable"):
                cache.put(key, facts)
    checks = []
    for i, spec in enumerate(specs):
        for target in targets:
            if target.name in skipped:
                check = judge_cuda(
                    spec, target, {"not_checkable": skipped[target.name]}, cached=False
                )
            else:
                facts, cached = facts_by_key[keys[(i, target.name)]]
                check = judge_cuda(spec, target, facts, cached=cached)
            checks.append(check)
    return checks


def specs_from_cu_file(path: str) -> list[CudaSpec]:
    """Every __global__ kernel of a .cu/.cuh file (block size unknown: set at launch)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    specs = []
    for match in _GLOBAL.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        specs.append(
            CudaSpec(
                name=match.group(1),
                source=text,
                file=path,
                line=line,
                origin="declared",
                options=(f"-I{os.path.dirname(os.path.abspath(path))}",),
            )
        )
    return specs
