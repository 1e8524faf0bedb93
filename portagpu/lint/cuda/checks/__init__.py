"""Built-in CUDA checkers; importing registers them under the `checker:`
names of rules/cuda_*.yaml. warp.py registers the finders hipify also
rewrites (portagpu/cuda/warp/); the others report only."""

from portagpu.lint.cuda.checks import (  # noqa: F401
    inline_asm,
    launch_width,
    library_calls,
    library_use,
    tiled_partition,
    warp,
)
