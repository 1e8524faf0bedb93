"""Safe fixes: exact edits, the fixed file parses, a second run changes nothing."""

from __future__ import annotations

import ast

import pytest

from portagpu.lint.fixes import apply_fixes


def safe(findings):
    return [f.fix for f in findings if f.fix and f.fix.applicability == "safe" and f.fix.edits]


def fix_once(lint, text: str, **kw) -> str:
    fixed, _ = apply_fixes(text, safe(lint(text, **kw)))
    ast.parse(fixed)  # a fixed file must parse
    return fixed


CASES = [
    (
        "import torch\nwith torch.cuda.amp.autocast():\n    pass\n",
        'import torch\nwith torch.amp.autocast("cuda"):\n    pass\n',
    ),
    (
        "import torch\nwith torch.cuda.amp.autocast(dtype=torch.bfloat16, enabled=True):\n    pass\n",
        'import torch\nwith torch.amp.autocast("cuda", dtype=torch.bfloat16, enabled=True):\n    pass\n',
    ),
    (  # torch.amp.GradScaler / custom_fwd need torch 2.3 / 2.4: suggestions, never applied
        "import torch as t\nscaler = t.cuda.amp.GradScaler(init_scale=1024)\n",
        "import torch as t\nscaler = t.cuda.amp.GradScaler(init_scale=1024)\n",
    ),
    (
        "import torch\n@torch.cuda.amp.custom_fwd\ndef f(ctx, x):\n    return x\n",
        "import torch\n@torch.cuda.amp.custom_fwd\ndef f(ctx, x):\n    return x\n",
    ),
    (  # version-gated: the old-version path is never rewritten
        "import torch\nif torch.__version__ < '1.10':\n    ctx = torch.cuda.amp.autocast()\n",
        "import torch\nif torch.__version__ < '1.10':\n    ctx = torch.cuda.amp.autocast()\n",
    ),
    (
        "def step(model, x, device):\n    return model(x.cuda())\n",
        "def step(model, x, device):\n    return model(x.to(device))\n",
    ),
    (
        "def step(x, device):\n    return x.cuda(non_blocking=True)\n",
        "def step(x, device):\n    return x.to(device, non_blocking=True)\n",
    ),
    (
        "def step(x, device):\n    return x.to('cuda')\n",
        "def step(x, device):\n    return x.to(device)\n",
    ),
    (
        "import torch\ndevice = torch.device('cpu')\ndef load(x):\n    return x.cuda()\n",
        "import torch\ndevice = torch.device('cpu')\ndef load(x):\n    return x.to(device)\n",
    ),
    (  # non-ASCII before the call: character columns, not bytes
        "def f(x, device):\n    s = 'énergie'; y = x.cuda()\n    return s, y\n",
        "def f(x, device):\n    s = 'énergie'; y = x.to(device)\n    return s, y\n",
    ),
    (  # a chain: both calls fixed, outer and inner
        "def f(m, device):\n    return m.cuda().half().cuda()\n",
        "def f(m, device):\n    return m.to(device).half().to(device)\n",
    ),
]


@pytest.mark.parametrize(("before", "after"), CASES)
def test_fix_applies_parses_and_is_idempotent(lint, before: str, after: str) -> None:
    fixed = before
    for _ in range(3):  # overlapping fixes may need another round, as with --fix
        new = fix_once(lint, fixed)
        if new == fixed:
            break
        fixed = new
    assert fixed == after
    assert safe(lint(fixed)) == []  # a second --fix run changes nothing
    assert fix_once(lint, fixed) == fixed


@pytest.mark.parametrize(
    "code",
    [
        "def f(x):\n    return x.cuda()\n",  # no device in scope
        "def f(x, device):\n    return x.cuda(1)\n",  # names a device: intent unknown
        "def f(x, device):\n    return x.to('cuda:1')\n",
        "import torch\nwith torch.cuda.amp.autocast(True):\n    pass\n",  # positional args shift
        "from torch.cuda.amp import autocast\nwith autocast():\n    pass\n",  # needs an import change
        "def f(x, device):\n    return x.cuda(  # keep\n    )\n",  # a comment would be lost
    ],
)
def test_unsafe_cases_are_suggestions_only(lint, code: str) -> None:
    findings = [f for f in lint(code) if f.code in ("PG102", "PG104")]
    assert findings, "the idiom is still reported"
    assert safe(findings) == []
    assert all(f.fix is not None and f.fix.applicability == "suggestion" for f in findings)


def test_device_assigned_after_use_is_not_in_scope(lint) -> None:
    code = "def f(x):\n    y = x.cuda()\n    device = y.device\n    return y\n"
    assert safe(lint(code)) == []


@pytest.mark.parametrize(
    "deletion",
    [
        "def reset():\n    global device\n    del device\n",
        "def reset():\n    global device\n    del (\n        device,\n    )\n",  # the name on a later line
        "if True:\n    del device\n",
    ],
)
def test_a_global_that_some_code_deletes_is_not_in_scope(lint, deletion: str) -> None:
    """`del device` anywhere may leave the global unbound where `.cuda()`
    runs: `.to(device)` would be a NameError, so no safe fix."""
    code = "import torch\ndevice = torch.device('cpu')\ndef load(x):\n    return x.cuda()\n" + deletion
    assert safe(lint(code)) == []
    assert safe(lint(code.replace(deletion, ""))), "without the deletion the fix is safe"


def test_torch_cuda_suggestions_only_rewrite_to_what_runs_on_cpu(lint) -> None:
    # torch.accelerator.synchronize() raises with no accelerator: no edit, the
    # message says to guard it; torch.Stream() works on every device: an edit
    code = "import torch as t\nt.cuda.synchronize()\ns = t.cuda.Stream()\nn = t.cuda.device_count()\n"
    findings = [f for f in lint(code) if f.code == "PG101"]
    assert [f.line for f in findings] == [2, 3]  # device_count() is 0 off CUDA: harmless
    sync, stream = findings
    assert sync.fix.edits == () and "is_available()" in sync.fix.message
    fixed, applied = apply_fixes(code, [f.fix for f in findings])
    assert applied == 1
    assert fixed == "import torch as t\nt.cuda.synchronize()\ns = t.Stream()\nn = t.cuda.device_count()\n"
    assert [f.line for f in lint(fixed) if f.code == "PG101"] == [2]


def test_requirement_rename(lint) -> None:
    code = "REQUIRES = ['torch', \"pynvml\"]\n"
    (finding,) = [f for f in lint(code) if f.code == "PG203"]
    fixed, _ = apply_fixes(code, [finding.fix])
    assert fixed == "REQUIRES = ['torch', \"nvidia-ml-py\"]\n"
