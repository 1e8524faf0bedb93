"""portagpu changes nothing in the process it is imported into, and Triton's
interpreter is chosen per kernel at launch, so import order does not matter.

Each check runs in a fresh interpreter (the test session itself has imported
everything already), with TRITON_INTERPRET and PORTAGPU_DEVICE unset.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def _run(code: str, cwd, **env: str) -> str:
    clean = {
        k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PORTAGPU_DEVICE")
    }
    script = cwd / "script.py"  # a file: @triton.jit needs the kernel's source
    script.write_text(textwrap.dedent(code))
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_import_plugin_and_lint_leave_the_environment_alone(tmp_path):
    (tmp_path / "app.py").write_text('import torch\nx = torch.zeros(3, device="cuda")\n')
    out = _run(
        """
        import os, sys
        before = dict(os.environ)
        import portagpu
        import portagpu.pytest_plugin
        from portagpu.cli import main
        code = main(["lint", "app.py"])
        changed = {k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k)}
        print(code, sorted(changed), "TRITON_INTERPRET" in os.environ)
        print(sorted(m for m in ("torch", "triton", "cupy", "numpy") if m in sys.modules))
    """,
        tmp_path,
    )
    findings, modules = out.strip().splitlines()[-2:]
    assert findings == "1 [] False"  # lint found the "cuda" device and changed nothing
    assert modules == "[]"


def test_a_pytest_session_with_the_plugin_leaves_the_environment_alone(tmp_path):
    (tmp_path / "test_env.py").write_text(
        textwrap.dedent("""
        import os

        def test_no_interpreter_switch(device):
            assert "TRITON_INTERPRET" not in os.environ
    """)
    )
    _run(
        """
        import sys, pytest
        sys.exit(pytest.main(["-q", "-p", "portagpu", "-p", "no:cacheprovider", "test_env.py"]))
    """,
        tmp_path,
    )


KERNEL_BEFORE_PORTAGPU = """
    import os, torch, triton, triton.language as tl

    @triton.jit  # decorated before portagpu is imported
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3, mask=mask)

    import portagpu

    x = torch.arange(300, dtype=torch.float32)
    out = torch.full_like(x, float("nan"))
    portagpu.launch(scale, (3,), x, out, 300, BLOCK=128)
    torch.testing.assert_close(out, 3 * x)
    print(type(scale).__name__, os.environ.get("TRITON_INTERPRET"))
"""


@pytest.mark.parametrize(
    ("triton_interpret", "kind"), [(None, "JITFunction"), ("1", "InterpretedFunction")]
)
def test_a_kernel_decorated_before_import_runs_on_the_cpu(tmp_path, triton_interpret, kind):
    """Unset: the JITFunction runs in the interpreter per launch. Set by the
    user before triton: Triton made an InterpretedFunction, used as it is."""
    pytest.importorskip("triton")
    pytest.importorskip("numpy")
    env = {"PORTAGPU_DEVICE": "cpu"}
    if triton_interpret:
        env["TRITON_INTERPRET"] = triton_interpret
    out = _run(KERNEL_BEFORE_PORTAGPU, tmp_path, **env)
    assert out.split() == [kind, str(triton_interpret)]
