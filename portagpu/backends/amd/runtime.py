"""ROCm (AMD) runtime hooks: compile and launch kernels, BLAS. Mixed into AmdBackend."""

from __future__ import annotations


class AmdRuntime:
    """Runtime half of the ROCm (AMD) backend (see portagpu/runtime)."""
