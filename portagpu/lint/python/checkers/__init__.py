"""Built-in checkers, one module per rule family; importing registers them."""

from portagpu.lint.python.checkers import (  # noqa: F401
    cupy,
    distributed,
    packaging,
    telemetry,
    torch_device,
    torch_idioms,
    triton,
)
