"""Issue 13 item 2: `.cuda()` -> `.to(device)` is a safe fix only where
`device` is definitely bound at the call (a parameter, or a binding that
dominates the call in the scope Python resolves the name in). Otherwise it
is a suggestion: the fixed code must never raise NameError/UnboundLocalError."""

from __future__ import annotations

import textwrap

import pytest

from portagpu.lint.catalogue import load_catalogue
from portagpu.lint.fixes import apply_fixes, safe_fixes
from portagpu.lint.model import LintSettings
from portagpu.lint.python import check_python

RULES = [r for r in load_catalogue() if r.id == "PG102"]


def _fixed(code: str) -> str | None:
    """The text after the safe fixes, or None when no safe fix was offered."""
    code = textwrap.dedent(code)
    findings = check_python("m.py", code, RULES, LintSettings())
    assert findings, "the .cuda() call must be reported either way"
    fixes = safe_fixes(findings)
    return apply_fixes(code, fixes)[0] if fixes else None


NOT_DEFINITE = {
    "nested function": """
        def f(x):
            def g():
                device = 1
            return x.cuda()
        """,
    "class body inside the function": """
        def f(x):
            class C:
                device = "cpu"
            return x.cuda()
        """,
    "class attribute seen from a method": """
        class M:
            device = "cpu"
            def f(self, x):
                return x.cuda()
        """,
    "one branch of an if": """
        def f(x, flag):
            if flag:
                device = "cpu"
            return x.cuda()
        """,
    "try body that may fail": """
        def f(x):
            try:
                device = pick()
            except ValueError:
                pass
            return x.cuda()
        """,
    "loop target (loop may not run)": """
        def f(x, devices):
            for device in devices:
                pass
            return x.cuda()
        """,
    "while body": """
        def f(x, n):
            while n:
                device = "cpu"
                n -= 1
            return x.cuda()
        """,
    "local assigned after: global shadowed": """
        device = "cpu"
        def f(x):
            y = x.cuda()
            device = y.device
            return y
        """,
    "deleted before": """
        def f(x, device):
            del device
            return x.cuda()
        """,
    "module level, conditional": """
        import os
        if os.environ.get("X"):
            device = "cpu"
        def f(x):
            return x.cuda()
        """,
    "module level, after the call": """
        y = x.cuda()
        device = "cpu"
        """,
    "module level in a function body only": """
        def setup():
            global device
            device = "cpu"
        def f(x):
            return x.cuda()
        """,
    "else branch only": """
        def f(x, flag):
            if flag:
                pass
            else:
                device = "cpu"
            return x.cuda()
        """,
    "walrus in one branch": """
        def f(x, flag):
            if flag and (device := "cpu"):
                pass
            return x.cuda()
        """,
    "with body binding": """
        def f(x, ctx):
            with ctx:
                if ctx.ok:
                    device = "cpu"
            return x.cuda()
        """,
    "except handler name, used after the handler": """
        def f(x):
            try:
                pass
            except Exception as device:
                pass
            return x.cuda()
        """,
    "match case binding": """
        def f(x, v):
            match v:
                case {"d": device}:
                    pass
            return x.cuda()
        """,
    "default argument: the parameter is not bound yet": """
        def g(device, y=x.cuda()):
            return y
        """,
}


@pytest.mark.parametrize("code", NOT_DEFINITE.values(), ids=NOT_DEFINITE.keys())
def test_no_safe_fix_without_a_definite_binding(code):
    assert _fixed(code) is None


DEFINITE = {
    "parameter": """
        def f(x, device):
            return x.cuda()
        """,
    "keyword-only parameter": """
        def f(x, *, device=None):
            return x.cuda()
        """,
    "enclosing function's parameter": """
        def f(device):
            def g(x):
                return x.cuda()
            return g
        """,
    "enclosing function's binding before the nested def": """
        def f():
            device = "cpu"
            def g(x):
                return x.cuda()
            return g
        """,
    "assignment earlier in the same block": """
        def f(x):
            device = "cpu"
            y = 1
            return x.cuda()
        """,
    "assignment before the enclosing if": """
        def f(x, flag):
            device = "cpu"
            if flag:
                return x.cuda()
        """,
    "both branches of an if": """
        def f(x, flag):
            if flag:
                device = "cpu"
            else:
                device = "meta"
            return x.cuda()
        """,
    "with ... as device, in its body": """
        def f(x, ctx):
            with ctx as device:
                return x.cuda()
        """,
    "for target, in its body": """
        def f(x, devices):
            for device in devices:
                x.cuda()
        """,
    "module level before the function": """
        import torch
        device = torch.device("cpu")
        def load(x):
            return x.cuda()
        """,
    "module level before the call": """
        device = "cpu"
        y = x.cuda()
        """,
    "tuple unpacking": """
        def f(x, pair):
            device, other = pair
            return x.cuda()
        """,
    "try body before the call, in the same body": """
        def f(x):
            try:
                device = pick()
                return x.cuda()
            except ValueError:
                return None
        """,
    "annotated assignment": """
        def f(x):
            device: str = "cpu"
            return x.cuda()
        """,
    "default argument sees the enclosing function's parameter": """
        def f(device, x):
            def g(y=x.cuda()):
                return y
            return g
        """,
    "if that binds or returns": """
        def f(x, flag):
            if flag:
                device = "cpu"
            else:
                return None
            return x.cuda()
        """,
    "lambda parameter": """
        g = lambda x, device: x.cuda()
        """,
    "method parameter": """
        class M:
            def f(self, x, device):
                return x.cuda()
        """,
}


@pytest.mark.parametrize("code", DEFINITE.values(), ids=DEFINITE.keys())
def test_safe_fix_with_a_definite_binding(code):
    fixed = _fixed(code)
    assert fixed is not None and ".to(device)" in fixed and ".cuda()" not in fixed
