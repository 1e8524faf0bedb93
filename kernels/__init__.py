"""Portable kernels (installed as portagpu.kernels)."""
