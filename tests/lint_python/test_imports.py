"""Import aliases resolve to qualified names (not grep matching)."""

from __future__ import annotations

import ast

import pytest

from portagpu.lint.python.imports import ImportMap


def qualify(source: str, expr: str) -> str | None:
    imports = ImportMap()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.add(node)
    return imports.qualify(ast.parse(expr, mode="eval").body)


@pytest.mark.parametrize(
    ("source", "expr", "expected"),
    [
        ("import torch", "torch.cuda.synchronize", "torch.cuda.synchronize"),
        ("import torch as t", "t.cuda.synchronize", "torch.cuda.synchronize"),
        ("from torch import cuda", "cuda.empty_cache", "torch.cuda.empty_cache"),
        ("from torch import cuda as c", "c.Event", "torch.cuda.Event"),
        ("from torch.cuda import amp", "amp.autocast", "torch.cuda.amp.autocast"),
        ("import pynvml as nv", "nv.nvmlInit", "pynvml.nvmlInit"),
        ("import torch.cuda", "torch.cuda.synchronize", "torch.cuda.synchronize"),
        ("import torch.cuda as tc", "tc.synchronize", "torch.cuda.synchronize"),
        ("def f():\n    import cupy as cp", "cp.cuda.cudnn", "cupy.cuda.cudnn"),
        (
            "import triton.language as tl",
            "tl.inline_asm_elementwise",
            "triton.language.inline_asm_elementwise",
        ),
    ],
)
def test_alias_resolves(source: str, expr: str, expected: str) -> None:
    assert qualify(source, expr) == expected


@pytest.mark.parametrize(
    ("source", "expr"),
    [
        ("import torch", "cuda.synchronize"),  # `cuda` is not bound by `import torch`
        ("import mylib", "mylib.cuda"),  # resolves, but to mylib, not torch
        ("from . import cuda", "cuda.synchronize"),  # a relative import is the project's own
        ("import torch", "x().cuda"),  # rooted at a call, not a name
    ],
)
def test_unbound_or_foreign_names_do_not_resolve_to_torch(source: str, expr: str) -> None:
    assert not (qualify(source, expr) or "").startswith("torch.")


def test_alias_usage_is_found_even_when_the_line_lacks_the_token(lint) -> None:
    # the candidate-line pruning must follow aliases: `c.synchronize()` has no "cuda"
    code = "from torch import cuda as c\n\ndef f():\n    c.synchronize()\n"
    findings = lint(code, select=("PG101",))
    assert [(f.line, f.code) for f in findings] == [(4, "PG101")]


def test_grep_lookalikes_are_not_findings(lint) -> None:
    code = "import mylib\nmylib.cuda.synchronize()\ncuda = object()\nprint('torch.cuda.synchronize()')\n"
    assert lint(code, select=("PG101",)) == []
