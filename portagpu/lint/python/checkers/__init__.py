"""Built-in checkers, one module per rule family; importing registers them."""

from portagpu.lint.python.checkers import cupy, telemetry, torch_device, triton  # noqa: F401
