"""Judge one compiled specialisation against one target's limits.

Statuses:
  fits           compiled, and within every per-block limit
  does-not-fit   compiled, but a launch would fail: more than 1,024 threads, more
                 shared memory/LDS than a block may have, more registers than an SM has
  compile-error  the compiler refused it (or reported an error and returned a binary)
  not-checked    the check could not run; `detail` says why. Never counted as a pass.

How a failure shows up at run time depends on how the kernel is launched:
  fixed launch   `kernel[grid](...)` / `portagpu.launch`: the launch raises
  autotune       Triton's autotuner skips a config that raises OutOfResources,
                 PTXASError or CompileTimeAssertionFailure while benchmarking (the
                 tuned set shrinks silently); any other error stops the autotuning.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from portagpu.kernelcheck.spec import KernelSpec
from portagpu.kernelcheck.targets import KIB, Target

FITS, DOES_NOT_FIT, COMPILE_ERROR, NOT_CHECKED = (
    "fits",
    "does-not-fit",
    "compile-error",
    "not-checked",
)
NVIDIA_REG_UNIT = (
    256  # registers are allocated per warp in units of 256 [CUDA-CC occupancy calculator]
)
NVIDIA_RESERVED_SHARED = 1 * KIB  # per block, from sm_80 on [CUDA-CC]


@dataclass
class Check:
    """The result for one (kernel specialisation, target)."""

    kernel: str  # module:qualname
    name: str  # the kernel's own name
    file: str
    line: int
    spec: str  # what tells this specialisation apart
    mode: str  # fixed | autotune
    config: str  # autotune: "2/8"
    group: str
    origin: str
    target: str
    status: str
    outcome: str = ""  # what happens at run time: "launch raises OutOfResources", ...
    reasons: list[str] = field(default_factory=list)
    detail: str = ""  # compiler error, why not checked, notes
    threads: int | None = None
    max_threads: int | None = None
    shared: int | None = None
    max_shared: int | None = None
    registers: dict[str, int] = field(default_factory=dict)
    spills: int | None = None
    occupancy: int | None = None
    occupancy_unit: str = ""  # "waves/SIMD (LLVM)" | "blocks/SM"
    assumed: str = ""
    cached: bool = False
    seconds: float = 0.0

    @property
    def blocking(self) -> bool:
        """Fails the run: a fixed launch that cannot run, or an autotuning that raises."""
        if self.status in (FITS, NOT_CHECKED):
            return False
        return self.mode != "autotune" or not self.dropped

    @property
    def dropped(self) -> bool:
        """An autotune config Triton skips on this target (the others may still run)."""
        return self.mode == "autotune" and self.outcome.startswith("autotune drops")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["blocking"] = self.blocking
        return data


def _base(spec: KernelSpec, target: Target) -> Check:
    return Check(
        kernel=spec.kernel.label,
        name=spec.kernel.short,
        file=spec.kernel.file,
        line=spec.kernel.line,
        spec=spec.label(),
        mode=spec.mode,
        config=spec.config,
        group=spec.group or spec.identity(),
        origin=spec.origin,
        target=target.name,
        status=NOT_CHECKED,
        assumed=spec.assumed,
        max_threads=target.max_threads,
        max_shared=target.max_shared,
    )


def not_checked(spec: KernelSpec, target: Target, why: str) -> Check:
    check = _base(spec, target)
    check.detail = why
    return check


def judge(
    spec: KernelSpec, target: Target, facts: dict[str, Any], *, cached: bool = False
) -> Check:
    check = _base(spec, target)
    check.cached = cached
    check.seconds = float(facts.get("seconds") or 0.0)
    if facts.get("not_checkable"):
        check.detail = facts["not_checkable"]
        return check
    if facts.get("unsupported_target"):
        check.detail = f"Triton {facts.get('triton', '')} does not compile for {target.name}: {facts.get('error', '')}"
        return check
    if not facts.get("compiled"):
        check.status = COMPILE_ERROR
        check.detail = facts.get("error", "the compiler failed")
        if spec.mode == "autotune":
            check.outcome = (
                "autotune drops this config (Triton skips configs raising "
                f"{facts.get('error_type')})"
                if facts.get("droppable")
                else "autotuning raises: Triton does not skip this error"
            )
        else:
            check.outcome = "launch raises"
        check.reasons = [_nvidia_only_hint(spec, target) or "does not compile"]
        return check
    warps, warp = int(facts["num_warps"]), int(facts.get("warp_size") or target.warp_size)
    check.threads = warps * warp
    check.shared = int(facts.get("shared") or 0)
    check.registers = dict(facts.get("registers") or {})
    check.spills = facts.get("spills")
    resources = ("OutOfResources", [])
    if check.threads > target.max_threads:
        resources[1].append(
            f"{check.threads} threads per block > {target.max_threads} "
            f"({warps} warps x {warp} lanes)"
        )
    if check.shared > target.max_shared:
        resources[1].append(
            f"{_bytes(check.shared)} of {'LDS' if target.vendor == 'amd' else 'shared memory'} "
            f"> {_bytes(target.max_shared)} per block"
        )
    occupancy, register_problem = _occupancy(target, check, warps, facts.get("occupancy"))
    check.occupancy = occupancy
    check.occupancy_unit = (
        ("waves/SIMD (LLVM)" if target.vendor == "amd" else "blocks/SM")
        if occupancy is not None
        else ""
    )
    notes = []
    if check.spills:
        notes.append(f"spills {check.spills} registers to scratch")
    if facts.get("stack"):  # ptxas's stack frame: where it put what did not fit in registers
        notes.append(f"{facts['stack']}-byte stack frame per thread")
    if facts.get("resources_from", "").startswith("not reported"):
        notes.append(f"registers {facts['resources_from']}")
    check.detail = "; ".join(notes)
    if resources[1] or register_problem:
        check.status = DOES_NOT_FIT
        check.reasons = resources[1] + ([register_problem] if register_problem else [])
        if resources[1]:
            check.outcome = (
                "autotune drops this config (OutOfResources)"
                if spec.mode == "autotune"
                else "launch raises OutOfResources"
            )
        else:  # the driver's "too many resources requested for launch", which the autotuner does not catch
            check.outcome = (
                "autotuning raises: too many resources requested for launch"
                if spec.mode == "autotune"
                else "launch fails: too many resources requested"
            )
        return check
    check.status = FITS
    return check


def _occupancy(
    target: Target, check: Check, warps: int, llvm: int | None
) -> tuple[int | None, str]:
    """(occupancy, a register problem that stops any launch, or "")."""
    if target.vendor == "amd":
        # LLVM's own figure (the "; Occupancy:" line), which accounts for VGPRs, SGPRs and LDS;
        # without it, the VGPR budget alone (an upper bound: SGPRs and LDS may lower it)
        return (llvm if llvm is not None else _waves_by_vgprs(target, check.registers)), ""
    regs = check.registers.get("regs")
    if regs is None:
        return None, ""
    per_warp = -(-regs * target.warp_size // NVIDIA_REG_UNIT) * NVIDIA_REG_UNIT
    by_regs = (
        (target.registers_per_sm // per_warp) // warps if per_warp else target.max_blocks_per_sm
    )
    if by_regs == 0:
        return 0, (
            f"{regs} registers x {check.threads} threads > {target.registers_per_sm} "
            "registers per SM"
        )
    reserved = NVIDIA_RESERVED_SHARED if int(target.triton_arch) >= 80 else 0
    by_shared = (
        target.shared_per_sm // (check.shared + reserved)
        if check.shared
        else target.max_blocks_per_sm
    )
    by_threads = target.max_threads_per_sm // max(1, check.threads or 1)
    return max(0, min(target.max_blocks_per_sm, by_regs, by_shared, by_threads)), ""


def _waves_by_vgprs(target: Target, registers: dict[str, int]) -> int | None:
    used = registers.get("vgpr", 0) + registers.get("agpr", 0)  # one file for both on gfx90a+
    if not used:
        return None
    blocks = -(-used // target.vgpr_granule) * target.vgpr_granule
    return min(target.max_waves_per_simd, target.vgprs_per_simd // blocks)


def _bytes(n: int) -> str:
    return f"{n / KIB:g} KiB" if n % 256 == 0 and n >= KIB else f"{n} B"


def _nvidia_only_hint(spec: KernelSpec, target: Target) -> str:
    if target.vendor != "amd":
        return ""
    from portagpu.kernelcheck.nvidia_only import nvidia_only_calls

    calls = nvidia_only_calls(spec.kernel)
    if not calls:
        return ""
    return "uses NVIDIA-only " + ", ".join(calls) + " (no AMD lowering)"
