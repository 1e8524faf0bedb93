"""Built-in checkers, one module per rule family; importing registers them."""

from portagpu.lint.python.checkers import (  # noqa: F401
    cupy,
    distributed,
    numba_warp,
    packaging,
    telemetry,
    torch_device,
    torch_idioms,
    triton,
)
