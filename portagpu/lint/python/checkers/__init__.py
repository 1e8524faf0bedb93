"""Built-in checkers, one module per rule family; importing registers them."""

from portagpu.lint.python.checkers import (  # noqa: F401
    cupy,
    distributed,
    telemetry,
    torch_device,
    triton,
)
