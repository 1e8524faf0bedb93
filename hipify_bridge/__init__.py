"""CUDA -> HIP translation (installed as portagpu.hipify_bridge)."""
