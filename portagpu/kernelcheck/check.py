"""Check kernel specialisations for targets: cache look-ups, compiles in worker
processes for the rest, verdicts against each target's limits."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from portagpu.errors import PortagpuError
from portagpu.kernelcheck import verdict
from portagpu.kernelcheck.cache import CompileCache, key_of
from portagpu.kernelcheck.pool import JOB_TIMEOUT_S, run_jobs
from portagpu.kernelcheck.report import Report
from portagpu.kernelcheck.spec import KernelSpec
from portagpu.kernelcheck.targets import Target
from portagpu.kernelcheck.toolchain import toolchain


def family_of(target: Target) -> str:
    return target.triton_backend


def options_for(spec: KernelSpec, target: Target) -> dict[str, Any]:
    """The launch options Triton would get on `target`. A `portagpu.launch` counts
    num_warps in 32-thread units and drops other vendors' options, per device."""
    options = dict(spec.options)
    if not spec.warp_units:
        return options
    from portagpu.runtime.triton_launch import foreign_triton_options, native_num_warps

    if options.get("num_warps") is not None:
        options["num_warps"] = native_num_warps(options["num_warps"], target.warp_size)
    foreign = foreign_triton_options(target.portagpu_backend)
    return {k: v for k, v in options.items() if k not in foreign}


def check_specs(
    specs: Iterable[KernelSpec],
    targets: Sequence[Target],
    *,
    cache: CompileCache | None = None,
    workers: int = 2,
    timeout: float = JOB_TIMEOUT_S,
    triton_cache_dir: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """One Check per (spec, target), in that order; compiles what the cache lacks."""
    started = time.perf_counter()
    tools = toolchain()
    slots: list[verdict.Check | None] = []
    pending: dict[int, tuple[KernelSpec, Target, str]] = {}
    jobs: dict[str, dict[str, Any]] = {}
    for spec in specs:
        for target in targets:
            slots.append(None)
            index = len(slots) - 1
            family = family_of(target)
            why = spec.problem or tools.triton_skip_reason(target.vendor)
            if not why and family not in spec.families:
                why = f"the launch was recorded without Triton's {family} backend"
            if why:
                slots[index] = verdict.not_checked(spec, target, why)
                continue
            try:
                options = options_for(spec, target)
            except PortagpuError as exc:  # e.g. num_warps=0: portagpu.launch refuses it anyway
                slots[index] = verdict.not_checked(spec, target, f"the launch is invalid: {exc}")
                continue
            key = key_of(
                tools.triton,
                spec.kernel.label,
                spec.source_hash,
                spec.params,
                spec.families[family],
                sorted(options.items()),
                target.triton_backend,
                target.triton_arch,
                target.warp_size,
            )
            facts = cache.get(key) if cache is not None else None
            if facts is not None:
                slots[index] = verdict.judge(spec, target, facts, cached=True)
                continue
            pending[index] = (spec, target, key)
            jobs.setdefault(
                key,
                {
                    "id": key,
                    "kernel": {
                        "name": spec.kernel.name,
                        "module": spec.kernel.module,
                        "file": spec.kernel.file,
                        "line": spec.kernel.line,
                    },
                    "spec": spec.families[family],
                    "params": list(spec.params),
                    "options": options,
                    "target": {
                        "backend": target.triton_backend,
                        "arch": target.triton_arch,
                        "warp": target.warp_size,
                    },
                    "label": f"{spec.kernel.short} [{spec.label()}] for {target.name}",
                },
            )
    if jobs and progress is not None:
        progress(
            f"compiling {len(jobs)} kernel specialisation(s) x target(s) with Triton "
            f"{tools.triton} ({min(workers, len(jobs))} process(es))"
        )
    results = run_jobs(
        list(jobs.values()), workers=workers, timeout=timeout, triton_cache_dir=triton_cache_dir
    )
    stored: set[str] = set()
    for index, (spec, target, key) in pending.items():
        facts = results.get(key) or {"not_checkable": "the compile process returned no result"}
        if cache is not None and key not in stored and _cacheable(facts):
            cache.put(key, facts)
            stored.add(key)
        slots[index] = verdict.judge(spec, target, facts)
    checks = [check for check in slots if check is not None]
    return Report(
        checks=checks, targets=list(targets), toolchain=tools, seconds=time.perf_counter() - started
    )


def _cacheable(facts: dict[str, Any]) -> bool:
    """Deterministic outcomes only: not a crash, a timeout or an environment problem."""
    return not facts.get("transient") and not facts.get("not_checkable")
