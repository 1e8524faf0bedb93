"""Triton kernels, one module per family. Importing one imports triton, so the
public modules (portagpu.kernels.<family>) import these only when a call needs them."""
