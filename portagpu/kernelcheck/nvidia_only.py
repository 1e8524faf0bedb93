"""Name the NVIDIA-only Triton calls a kernel makes, so that an AMD compile
failure says why: `tl.extra.cuda.*` (PTX special registers, grid dependency
control, NVIDIA float8 conversions, `libdevice`'s __nv_* functions) and inline
PTX in `tl.inline_asm_elementwise`."""

from __future__ import annotations

import ast
from functools import cache

from portagpu.kernelcheck.spec import KernelRef

PTX_HINTS = (
    "mov.u32",
    "mov.u64",
    "%smid",
    "%globaltimer",
    "%laneid",
    "cvt.rn",
    "ld.global",
    "st.global",
    "prmt.b32",
    "lop3.b32",
    "shfl.sync",
)


def nvidia_only_calls(kernel: KernelRef) -> list[str]:
    """'tl.extra.cuda.smid', 'inline PTX' ... used in the kernel's own body."""
    return list(_scan(kernel.file, kernel.short, kernel.line))


@cache
def _scan(file: str, name: str, line: int) -> tuple[str, ...]:
    try:
        with open(file, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return ()
    cuda_aliases, cuda_functions = _cuda_aliases(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name != name:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if first != line and node.lineno != line:
            continue
        for inner in ast.walk(node):
            dotted = _dotted(inner) if isinstance(inner, ast.Attribute) else ""
            head, _, last = dotted.rpartition(".")
            if (
                head.endswith("extra.cuda")
                or head.endswith("extra.cuda.libdevice")
                or (head and head.split(".")[0] in cuda_aliases)
            ):
                found.append(
                    f"tl.extra.cuda.{dotted.split('cuda.', 1)[-1]}"
                    if "cuda." in dotted
                    else f"tl.extra.cuda.{last}"
                )
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id in cuda_functions
            ):
                found.append(f"tl.extra.cuda.{cuda_functions[inner.func.id]}")
            if isinstance(inner, ast.Call) and _dotted(inner.func).endswith(
                "inline_asm_elementwise"
            ):
                asm = next(
                    (
                        a.value
                        for a in [
                            *inner.args[:1],
                            *(k.value for k in inner.keywords if k.arg == "asm"),
                        ]
                        if isinstance(a, ast.Constant) and isinstance(a.value, str)
                    ),
                    "",
                )
                if any(hint in asm for hint in PTX_HINTS):
                    found.append("inline PTX (tl.inline_asm_elementwise)")
    unique = list(dict.fromkeys(found))
    return tuple(u for u in unique if not any(o != u and o.startswith(u + ".") for o in unique))


def _cuda_aliases(tree: ast.Module) -> tuple[set[str], dict[str, str]]:
    """Names bound by imports to triton.language.extra.cuda or its libdevice
    (modules), and to functions imported from them (alias -> name)."""
    modules: set[str] = set()
    functions: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            bound = alias.asname or alias.name
            if node.module == "triton.language.extra" and alias.name == "cuda":
                modules.add(bound)
            elif node.module == "triton.language.extra.cuda":
                if alias.name == "libdevice":
                    modules.add(bound)
                else:
                    functions[bound] = alias.name
            elif node.module == "triton.language.extra.cuda.libdevice":
                functions[bound] = f"libdevice.{alias.name}"
    return modules, functions


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))
