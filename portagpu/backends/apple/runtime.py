"""MPS (Apple) runtime hooks: compile and launch kernels, BLAS. Mixed into AppleBackend."""

from __future__ import annotations


class AppleRuntime:
    """Runtime half of the MPS (Apple) backend (see portagpu/runtime)."""
