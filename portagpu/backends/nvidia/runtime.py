"""CUDA (NVIDIA) runtime hooks: compile and launch kernels, BLAS. Mixed into NvidiaBackend."""

from __future__ import annotations


class NvidiaRuntime:
    """Runtime half of the CUDA (NVIDIA) backend (see portagpu/runtime)."""
