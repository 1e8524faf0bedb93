"""CPU runtime hooks: compile and launch kernels, BLAS. Mixed into CpuBackend."""

from __future__ import annotations


class CpuRuntime:
    """Runtime half of the CPU backend (see portagpu/runtime)."""
