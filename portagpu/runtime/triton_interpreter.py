"""Running one Triton kernel in Triton's interpreter, without TRITON_INTERPRET.

`@triton.jit` decides once, when it runs, between a compiled `JITFunction`
and an `InterpretedFunction` (it reads TRITON_INTERPRET then). portagpu sets
no environment variable, so on a backend whose `triton_mode` is "interpreted"
(CPU, MPS) a kernel is usually a JITFunction. `interpreted(kernel)` gives an
equivalent that runs in the interpreter: Triton's own `InterpretedFunction`
over the JITFunction's Python function, under copies of any autotune /
heuristics wrappers. It is made once per kernel and cached.

While an interpreted kernel runs, `interpreting()` lets it call what was
compiled for the GPU: `@triton.jit` helpers and triton.language's own
(`tl.sum`, `tl.cumsum`, `x.sum()` ...) are JITFunctions too, and a
JITFunction refuses to be called outside a compiled kernel. Triton's
interpreter patches triton.language the same way for the duration of a launch;
like it, interpreted launches run one at a time (a lock).

A kernel that is already an InterpretedFunction (the user set
TRITON_INTERPRET=1 before decorating it) is used as it is.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# id(JITFunction) -> (the JITFunction, its InterpretedFunction). Keyed by id:
# hashing a JITFunction hashes its source and dependencies, which fails while
# the interpreter has patched triton.language. The entry holds the
# JITFunction, so its id is not reused while the entry lives.
_INTERPRETED: dict[int, tuple[Any, Any]] = {}
_LOCK = threading.RLock()


def _interpreted_function(jit: Any) -> Any:
    entry = _INTERPRETED.get(id(jit))
    if entry is None:
        from triton.runtime.interpreter import InterpretedFunction

        function = InterpretedFunction(jit.fn)
        function.pre_run_hooks = jit.pre_run_hooks  # shared: hooks added later apply too
        entry = _INTERPRETED[id(jit)] = (jit, function)
    return entry[1]


def interpreted(kernel: Any) -> Any:
    """`kernel` (a JITFunction, or autotune/heuristics wrappers around one) as
    a kernel that runs in Triton's interpreter; wrappers are shallow copies
    whose innermost function is the InterpretedFunction."""
    from triton.runtime.jit import JITFunction

    if isinstance(kernel, JITFunction):
        return _interpreted_function(kernel)
    inner = getattr(kernel, "fn", None)
    if inner is None:  # an InterpretedFunction already, or not a Triton kernel
        return kernel
    wrapper = copy.copy(kernel)
    wrapper.fn = interpreted(inner)
    return wrapper


@contextmanager
def interpreting() -> Iterator[None]:
    """Compiled `@triton.jit` functions called from an interpreted kernel run
    in the interpreter too, for the duration of the block."""
    from triton.language import core
    from triton.runtime.jit import JITFunction

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _interpreted_function(self)(*args, **kwargs)

    def member(jit: Any) -> Any:
        # triton.language makes tl.sum and friends tensor methods (x.sum()) by
        # setting the JITFunction on the class; it does not bind, a function does
        return lambda tensor, *args, **kwargs: _interpreted_function(jit)(tensor, *args, **kwargs)

    with _LOCK:
        saved = [(JITFunction, "__call__", JITFunction.__dict__["__call__"])]
        saved += [
            (core.tensor, name, value)
            for name, value in vars(core.tensor).items()
            if isinstance(value, JITFunction)
        ]
        JITFunction.__call__ = call
        for _, name, value in saved[1:]:
            setattr(core.tensor, name, member(value))
        try:
            yield
        finally:
            for owner, name, value in saved:
                setattr(owner, name, value)
