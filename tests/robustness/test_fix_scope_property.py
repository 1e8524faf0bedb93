"""Item 2 as a property: random functions and modules that bind `device`
on some paths (branches, loops, try, with, nested defs and classes, del) and
call `.cuda()` anywhere. Each safe fix is *run* on every path the original
runs on: the fixed code must never raise NameError/UnboundLocalError."""

from __future__ import annotations

import contextlib
import itertools
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portagpu.lint.catalogue import load_catalogue
from portagpu.lint.fixes import apply_fixes, safe_fixes
from portagpu.lint.model import LintSettings
from portagpu.lint.python import check_python

RULES = [r for r in load_catalogue() if r.id == "PG102"]

LEAVES = ['device = "cpu"', "pass", "y = x.cuda()", "del device", "device: str = 'meta'"]
COMPOUND = [
    "if flag:\n{0}\nelse:\n{1}",
    "if flag:\n{0}",
    "if not flag:\n{0}\n    return None",
    "for device in devices:\n{0}",
    "for _ in devices:\n{0}",
    "try:\n{0}\nexcept ValueError:\n{1}",
    "try:\n{0}\nfinally:\n{1}",
    "with ctx:\n{0}",
    "with ctx as device:\n{0}",
    "def g():\n{0}\n    return None\ng()",
    "class C:\n{0}",
    "while flag and devices:\n    devices = devices[1:]\n{0}",
]


def _indent(block: str) -> str:
    return "\n".join("    " + line for line in block.split("\n"))


def _compound(template: str, blocks: list[str]) -> str:
    return template.format(*(_indent(b) for b in blocks))


blocks = st.recursive(
    st.lists(st.sampled_from(LEAVES), min_size=1, max_size=3).map("\n".join),
    lambda inner: st.lists(
        st.one_of(
            inner,
            st.tuples(st.sampled_from(COMPOUND), st.lists(inner, min_size=2, max_size=2)).map(
                lambda t: _compound(t[0], t[1])
            ),
        ),
        min_size=1,
        max_size=3,
    ).map("\n".join),
    max_leaves=8,
)

PRELUDES = ["", 'device = "cpu"\n', "import os\nif os.sep:\n    device = 'cpu'\n"]


def _program(prelude: str, body: str, in_function: bool, trailer: str) -> str:
    if in_function:
        code = f"{prelude}def f(x, flag, devices, ctx):\n{_indent(body)}\n    return x.cuda()\n{trailer}"
    else:
        code = f"{prelude}{body}\nz = x.cuda()\n{trailer}"
    return code


class _Tensor:
    def cuda(self, *args, **kwargs):
        return self

    def to(self, *args, **kwargs):
        return self


def _run(code: str, flag: bool, devices: list[str], in_function: bool) -> BaseException | None:
    env = {
        "x": _Tensor(),
        "flag": flag,
        "devices": list(devices),
        "ctx": contextlib.nullcontext("dev"),
    }
    try:
        exec(compile(code, "m.py", "exec"), env)
        if in_function:
            env["f"](_Tensor(), flag, list(devices), contextlib.nullcontext("dev"))
    except (NameError, UnboundLocalError) as exc:
        return exc
    return None


@settings(
    max_examples=int(os.environ.get("PORTAGPU_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.sampled_from(PRELUDES),
    blocks,
    st.booleans(),
    st.sampled_from(["", 'device = "late"\n']),
)
def test_safe_fix_never_introduces_a_name_error(prelude, body, in_function, trailer):
    code = _program(prelude, body, in_function, trailer)
    try:
        compile(code, "m.py", "exec")
    except SyntaxError:
        return  # e.g. `return` at module level from a template
    findings = check_python("m.py", code, RULES, LintSettings())
    fixes = safe_fixes(findings)
    if not fixes:
        return
    fixed, _ = apply_fixes(code, fixes)
    for flag, devices in itertools.product((True, False), ([], ["d"])):
        if _run(code, flag, devices, in_function) is not None:
            continue  # the original fails on this path too
        error = _run(fixed, flag, devices, in_function)
        assert error is None, (
            f"{error!r} on flag={flag} devices={devices}\n--- original\n{code}\n--- fixed\n{fixed}"
        )
