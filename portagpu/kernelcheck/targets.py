"""The GPUs a kernel is checked for: how Triton names them, and the per-block
limits and per-SM/CU budgets a compiled kernel must fit.

Sources of the figures (checked when this table was written):

[CUDA-CC]  CUDA C++ Programming Guide, "Technical Specifications per Compute
           Capability": 1,024 threads per block; 64 K 32-bit registers per SM;
           255 registers per thread; max resident threads / blocks per SM;
           shared memory per SM and the opt-in maximum per block.
           https://docs.nvidia.com/cuda/cuda-c-programming-guide/#features-and-technical-specifications
[HOPPER]   NVIDIA Hopper Tuning Guide: 228 KB of shared memory per SM, up to
           227 KB per thread block (opt-in; what Triton's driver reports as
           max_shared_mem). https://docs.nvidia.com/cuda/hopper-tuning-guide/
[AMPERE]   NVIDIA Ampere Tuning Guide: A100 (sm_80) 164 KB per SM, up to 163 KB
           per block; GA10x (sm_86) 100 KB per SM, 99 KB per block.
           https://docs.nvidia.com/cuda/ampere-tuning-guide/
[ROCM-SPEC] ROCm "AMD GPU specifications" table: wavefront size, LDS (KiB) per
           CU, VGPR file (KiB): gfx90a/gfx942 64 KiB LDS, 512 KiB VGPRs per CU;
           gfx950 160 KiB LDS; RDNA 2/3 wave32, 128 KiB LDS per WGP of which one
           workgroup may use 64 KiB. https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
[HIP-HW]   HIP programming guide, "Hardware implementation": a workgroup is at most
           1,024 work-items and its LDS is at most 64 KiB (hipDeviceProp
           sharedMemPerBlock), 160 KiB on CDNA4 (gfx950).
           https://rocm.docs.amd.com/projects/HIP/en/latest/understand/hardware_implementation.html
[LLVM-AMDGPU] LLVM AMDGPUUsage and AMDGPUBaseInfo (getMaxWavesPerEU): at most 8
           waves per SIMD on gfx90a/gfx94x/gfx950, 10 on earlier GCN/CDNA, 16 on
           RDNA 2 and later; wave64 on GCN/CDNA, wave32 for compute on RDNA.
           https://llvm.org/docs/AMDGPUUsage.html
[CDNA3-ISA] AMD Instinct MI300 (CDNA3) ISA reference: 512 VGPRs per lane per
           SIMD, shared between architected and accumulation registers (also
           CDNA2, gfx90a). RDNA3 ISA: 1,536 VGPRs per lane per SIMD in wave32 on
           gfx1100/gfx1101 (1,024 on gfx1102/gfx1103).

An arch that is not in the table can still be named: its family (gfx9 CDNA,
gfx10+ RDNA, sm_NN) gives the warp size and the per-block limits, and
`Target.inferred` says the numbers were inferred, not looked up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from portagpu.errors import ConfigError

MAX_BLOCK_THREADS = 1024  # every target here: CUDA [CUDA-CC], HIP [HIP-HW]
KIB = 1024


@dataclass(frozen=True)
class Target:
    """One GPU architecture, as Triton compiles for it and as its limits bind."""

    name: str  # "gfx942", "sm_90"
    vendor: str  # "amd" | "nvidia"
    triton_backend: str  # "hip" | "cuda" (GPUTarget.backend)
    triton_arch: str | int  # "gfx942" | 90 (GPUTarget.arch)
    warp_size: int
    description: str
    max_threads: int = MAX_BLOCK_THREADS
    max_shared: int = 64 * KIB  # bytes one block/workgroup may use (opt-in max on NVIDIA)
    # occupancy budgets
    shared_per_sm: int = 64 * KIB  # NVIDIA: per SM; AMD: per CU as one workgroup sees it
    registers_per_sm: int = 65536  # NVIDIA: 32-bit registers per SM
    max_threads_per_sm: int = 2048  # NVIDIA
    max_blocks_per_sm: int = 32  # NVIDIA
    vgprs_per_simd: int = 512  # AMD: VGPRs per lane per SIMD (arch + acc where unified)
    max_waves_per_simd: int = 8  # AMD
    simds_per_cu: int = 4  # AMD: a workgroup's waves spread over these
    vgpr_granule: int = (
        8  # AMD: VGPRs are allocated in blocks of this many (LLVM getVGPRAllocGranule)
    )
    inferred: bool = False  # limits from the family, not from the table

    @property
    def portagpu_backend(self) -> str:
        """portagpu's backend name for this vendor (drives vendor-option filtering)."""
        return "rocm" if self.vendor == "amd" else "cuda"


def _nvidia(
    cc: int,
    description: str,
    shared_kib: int,
    per_sm_kib: int,
    threads_per_sm: int,
    blocks_per_sm: int,
    inferred: bool = False,
) -> Target:
    return Target(
        name=f"sm_{cc}",
        vendor="nvidia",
        triton_backend="cuda",
        triton_arch=cc,
        warp_size=32,
        description=description,
        max_shared=shared_kib * KIB,
        shared_per_sm=per_sm_kib * KIB,
        max_threads_per_sm=threads_per_sm,
        max_blocks_per_sm=blocks_per_sm,
        inferred=inferred,
    )


def _amd(
    arch: str,
    description: str,
    wave: int,
    lds_kib: int,
    vgprs: int,
    waves: int,
    inferred: bool = False,
) -> Target:
    # VGPR allocation granule [LLVM-AMDGPU getVGPRAllocGranule]: 4 on GCN with 256 VGPRs,
    # 8 on gfx90a and later CDNA, 16 on RDNA wave32, 24 where RDNA has 1,536 VGPRs
    granule = 4 if vgprs == 256 else 8 if wave == 64 else 24 if vgprs == 1536 else 16
    return Target(
        name=arch,
        vendor="amd",
        triton_backend="hip",
        triton_arch=arch,
        warp_size=wave,
        description=description,
        max_shared=lds_kib * KIB,
        shared_per_sm=lds_kib * KIB,
        vgprs_per_simd=vgprs,
        max_waves_per_simd=waves,
        vgpr_granule=granule,
        inferred=inferred,
    )


# fmt: off
TARGETS: dict[str, Target] = {t.name: t for t in (
    # NVIDIA [CUDA-CC], [HOPPER], [AMPERE]: name, shared per block (opt-in) KiB, per SM KiB,
    # resident threads per SM, resident blocks per SM
    _nvidia(70, "V100 (Volta)", 96, 96, 2048, 32),
    _nvidia(75, "T4 / RTX 20 (Turing)", 64, 64, 1024, 16),
    _nvidia(80, "A100 (Ampere)", 163, 164, 2048, 32),
    _nvidia(86, "RTX 30 / A40 (Ampere GA10x)", 99, 100, 1536, 16),
    _nvidia(89, "L4 / L40 / RTX 40 (Ada)", 99, 100, 1536, 24),
    _nvidia(90, "H100 / H200 (Hopper)", 227, 228, 2048, 32),
    _nvidia(100, "B200 (Blackwell)", 227, 228, 2048, 32),
    _nvidia(120, "RTX 50 (Blackwell GB20x)", 99, 100, 1536, 32),
    # AMD [ROCM-SPEC], [HIP-HW], [LLVM-AMDGPU], [CDNA3-ISA]: arch, wave, LDS per workgroup KiB,
    # VGPRs per SIMD lane, max waves per SIMD
    _amd("gfx906", "MI50 / MI60 (GCN5)", 64, 64, 256, 10),
    _amd("gfx908", "MI100 (CDNA1)", 64, 64, 256, 10),
    _amd("gfx90a", "MI210 / MI250 (CDNA2)", 64, 64, 512, 8),
    _amd("gfx942", "MI300A / MI300X / MI325X (CDNA3)", 64, 64, 512, 8),
    _amd("gfx950", "MI350X / MI355X (CDNA4)", 64, 160, 512, 8),
    _amd("gfx1030", "RX 6800/6900, W6800 (RDNA2)", 32, 64, 1024, 16),
    _amd("gfx1100", "RX 7900, W7900 (RDNA3)", 32, 64, 1536, 16),
    _amd("gfx1101", "RX 7800/7700 (RDNA3)", 32, 64, 1536, 16),
    _amd("gfx1102", "RX 7600 (RDNA3)", 32, 64, 1024, 16),
    _amd("gfx1200", "RX 9060 (RDNA4)", 32, 64, 1536, 16),
    _amd("gfx1201", "RX 9070 (RDNA4)", 32, 64, 1536, 16),
)}
# fmt: on

DEFAULT_TARGETS = ("gfx942", "gfx90a", "gfx1100", "sm_90", "sm_80")
ALIASES = {
    "mi300": "gfx942",
    "mi300x": "gfx942",
    "mi325x": "gfx942",
    "mi250": "gfx90a",
    "mi250x": "gfx90a",
    "mi210": "gfx90a",
    "mi350": "gfx950",
    "mi355x": "gfx950",
    "mi100": "gfx908",
    "h100": "sm_90",
    "h200": "sm_90",
    "a100": "sm_80",
    "l40": "sm_89",
    "l4": "sm_89",
    "b200": "sm_100",
    "v100": "sm_70",
    "t4": "sm_75",
}
_SM = re.compile(r"^(?:sm_?|cuda:?|compute_)?(\d{2,3})a?$")
_GFX = re.compile(r"^gfx([0-9a-f]{3,4})(?::.*)?$")


def resolve(name: str) -> Target:
    """The Target for `name`: gfx942, gfx942:sramecc+:xnack-, sm_90, sm90, 90, sm_90a,
    mi300x, h100. An arch missing from the table gets its family's limits."""
    raw = name.strip().lower()
    key = ALIASES.get(raw, raw)
    if key in TARGETS:
        return TARGETS[key]
    sm = _SM.match(key)
    if sm:
        found = TARGETS.get(f"sm_{int(sm.group(1))}")
        return found or _inferred_nvidia(int(sm.group(1)))
    gfx = _GFX.match(key)
    if gfx:
        arch = f"gfx{gfx.group(1)}"
        return TARGETS.get(arch) or _inferred_amd(arch)
    raise ConfigError(
        f"unknown target {name!r}: name an AMD arch (gfx90a, gfx942, gfx1100, ...) or an "
        f"NVIDIA one (sm_80, sm_90, ...); known: {', '.join(TARGETS)}"
    )


def _inferred_nvidia(cc: int) -> Target:
    if cc < 70:
        raise ConfigError(f"sm_{cc}: Triton compiles for sm_70 and newer only")
    base = max(
        (t for t in TARGETS.values() if t.vendor == "nvidia" and int(t.triton_arch) <= cc),
        key=lambda t: int(t.triton_arch),
    )
    return Target(
        **{
            **base.__dict__,
            "name": f"sm_{cc}",
            "triton_arch": cc,
            "description": f"sm_{cc} (limits of {base.name})",
            "inferred": True,
        }
    )


def _inferred_amd(arch: str) -> Target:
    # gfx9xx: GCN/CDNA, wave64; gfx10xx and later: RDNA, wave32 (Triton compiles RDNA as wave32)
    if arch.startswith("gfx9"):
        return _amd(arch, f"{arch} (GCN/CDNA family limits)", 64, 64, 512, 8, inferred=True)
    return _amd(arch, f"{arch} (RDNA family limits)", 32, 64, 1024, 16, inferred=True)


def parse_targets(
    raw: str | list[str] | tuple[str, ...], where: str = "--target"
) -> tuple[Target, ...]:
    """Targets from "gfx942,sm_90" or a list; duplicates dropped, order kept."""
    items = raw.split(",") if isinstance(raw, str) else [p for r in raw for p in str(r).split(",")]
    names = [item.strip() for item in items if item.strip()]
    if not names:
        raise ConfigError(f"{where}: name at least one target, e.g. {','.join(DEFAULT_TARGETS)}")
    try:
        found = [resolve(name) for name in names]
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return tuple({t.name: t for t in found}.values())
