"""CUDA -> HIP translation (installed as portagpu.hipify_bridge).

`translate(source, warp_size=None, engine="auto")` renames the CUDA API with
hipify-perl/hipify-clang/PyTorch's tables and fixes the 32-lane assumptions
hipify leaves alone; nothing heavy is imported until it is called.
"""

from __future__ import annotations

__all__ = ["EngineUnavailable", "Report", "Translation", "translate"]


def __getattr__(name: str):
    if name in ("translate", "Translation", "Report"):
        from portagpu.hipify_bridge import translation as module

        return getattr(module, name)
    if name == "EngineUnavailable":
        from portagpu.hipify_bridge.engines import EngineUnavailable

        return EngineUnavailable
    raise AttributeError(f"module 'portagpu.hipify_bridge' has no attribute {name!r}")
