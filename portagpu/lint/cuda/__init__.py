"""CUDA C rules (PG5xx/PG6xx) over .cu/.cuh files and over CUDA sources
embedded in Python: analysis.py turns a rule's checker hits into findings,
checks/ holds the checkers (registered by name in registry.py).

Nothing heavy is imported here; tree_sitter loads on the first parse.
"""

from __future__ import annotations

__all__ = ["check_cuda_file", "check_embedded"]


def __getattr__(name: str):
    if name == "check_cuda_file":
        from portagpu.lint.cuda.analysis import check_cuda_file

        return check_cuda_file
    if name == "check_embedded":
        from portagpu.lint.cuda.embedded import check_embedded

        return check_embedded
    raise AttributeError(f"module 'portagpu.lint.cuda' has no attribute {name!r}")
