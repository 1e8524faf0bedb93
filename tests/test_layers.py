"""The layers of docs/architecture.md, held: syntax (portagpu.cuda) <- analysis
(portagpu.lint) <- faces (cli, hipify_bridge, runtime).

Each face runs in a fresh interpreter and the portagpu modules it loaded are
checked; an ast pass over the package checks the import lines themselves, so
a lazy import inside a function cannot slip past the first kind of test.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "portagpu"

# what `import portagpu` loads: nothing but its version (public names resolve lazily)
PACKAGE_INIT = {"portagpu", "portagpu._version"}

WARP_SOURCE = r"""
extern "C" __global__ void row_sum(const float* x, float* out, int n) {
    float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}
"""


def loaded_after(code: str) -> set[str]:
    """The portagpu modules in sys.modules after running `code` in a fresh interpreter."""
    script = textwrap.dedent(code) + textwrap.dedent("""
        import json as _json, sys as _sys
        print("MODULES=" + _json.dumps(sorted(m for m in _sys.modules
                                              if m == "portagpu" or m.startswith("portagpu."))))
    """)
    done = subprocess.run(
        # not cwd=REPO: `-c` puts the cwd first on sys.path, and the repo's own
        # portagpu/ (without the kernels/ rules/ hipify_bridge/ mapping) would
        # shadow the installed package under CI's non-editable install
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("MODULES="))
    return set(json.loads(line[len("MODULES=") :]))


def under(modules: set[str], *packages: str) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


def test_import_portagpu_stays_light():
    modules = loaded_after("import portagpu")
    assert modules <= PACKAGE_INIT


def test_lint_loads_no_runtime_backends_or_hipify(tmp_path):
    (tmp_path / "m.py").write_text(
        "import cupy\nimport torch\ntorch.cuda.synchronize()\n"
        f"k = cupy.RawKernel(r'''{WARP_SOURCE}''', 'row_sum')\n"
    )
    (tmp_path / "k.cu").write_text(WARP_SOURCE)
    modules = loaded_after(f"""
        from portagpu.cli import main
        code = main(["lint", "--no-cache", {str(tmp_path)!r}])
        assert code == 1, code  # it found something: both languages ran
    """)
    assert {"portagpu.lint.python.checkers", "portagpu.lint.cuda.checks"} <= modules
    assert not under(modules, "portagpu.backends", "portagpu.hipify_bridge", "portagpu.kernels")
    assert under(modules, "portagpu.runtime") <= PACKAGE_INIT


def test_translate_loads_no_lint():
    modules = loaded_after(f"""
        from portagpu.hipify_bridge import translate
        out = translate({WARP_SOURCE!r}, engine="builtin", warp_size=64).text
        assert "__shfl_down_sync(PORTAGPU_FULL_MASK" in out, out
    """)
    assert "portagpu.cuda.warp" in modules
    assert not under(modules, "portagpu.lint", "portagpu.backends", "portagpu.cli")
    assert under(modules, "portagpu.runtime") <= PACKAGE_INIT


def test_translate_loads_lint_only_when_diagnostics_are_asked_for():
    modules = loaded_after(f"""
        from portagpu.hipify_bridge import translate
        report = translate({WARP_SOURCE!r}, engine="builtin", diagnose=True).report
        assert sorted(w["rule"] for w in report.warp_rewrites) == ["PG501", "PG504", "PG505"]
    """)
    assert {"portagpu.lint.catalogue", "portagpu.lint.cuda.analysis"} <= modules


def test_cuda_source_on_amd_loads_no_lint():
    """CudaKernel launched on a simulated gfx942 with the recording fake CuPy
    of tests/runtime/conftest.py: hipify_bridge translates, lint stays out."""
    modules = loaded_after(f"""
        import shutil, sys
        sys.path.insert(0, {str(REPO / "tests" / "runtime")!r})
        from conftest import SIMULATED, FakeCupy
        import portagpu
        import portagpu.runtime.dispatch as dispatch
        from portagpu.device import clear_cache

        cupy = sys.modules["cupy"] = FakeCupy(is_hip=True)
        device = SIMULATED["gfx942"]()
        dispatch.detect = lambda: device
        clear_cache()
        which = shutil.which
        shutil.which = lambda name, *a, **k: "/usr/bin/hipcc" if name == "hipcc" else which(name, *a, **k)
        portagpu.launch(portagpu.CudaKernel({WARP_SOURCE!r}, "row_sum"), 1,
                        cupy.ndarray(), cupy.ndarray(), 64, block=64)
        code = cupy.compiled[-1]["code"]
        assert "__shfl_down_sync(PORTAGPU_FULL_MASK" in code, code
    """)
    assert "portagpu.hipify_bridge.translation" in modules
    assert not under(modules, "portagpu.lint", "portagpu.cli")


# --- the import lines themselves ------------------------------------------------------

# package -> packages it must never import (at module level or inside a function)
FORBIDDEN = {
    "portagpu.cuda": (
        "portagpu.lint",
        "portagpu.runtime",
        "portagpu.backends",
        "portagpu.cli",
        "portagpu.hipify_bridge",
        "portagpu.kernels",
    ),
    "portagpu.lint": (
        "portagpu.runtime",
        "portagpu.backends",
        "portagpu.cli",
        "portagpu.hipify_bridge",
        "portagpu.kernels",
    ),
    "portagpu.runtime": ("portagpu.lint", "portagpu.cli"),
    # backends hold the vendor facts the runtime asks for: runtime -> backends only
    "portagpu.backends": ("portagpu.lint", "portagpu.cli", "portagpu.runtime"),
}


def _module_name(path: Path, top: Path) -> str:
    parts = path.relative_to(top).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from portagpu import lint` imports portagpu.lint too
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _violations(package: Path = PACKAGE) -> list[str]:
    out = []
    for path in sorted(package.rglob("*.py")):
        name = _module_name(path, package.parent)
        for layer, banned in FORBIDDEN.items():
            if name != layer and not name.startswith(layer + "."):
                continue
            for line, imported in _imports(path):
                hit = [b for b in banned if imported == b or imported.startswith(b + ".")]
                if hit:
                    out.append(
                        f"{path.relative_to(package.parent)}:{line}: {name} imports {imported}"
                    )
    return out


def test_layers_import_only_downwards():
    assert _violations() == []


def test_the_static_check_sees_a_lazy_import(tmp_path):
    probe = tmp_path / "portagpu" / "lint" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("def f():\n    from portagpu.runtime import launch\n")
    assert _violations(tmp_path / "portagpu") == [
        "portagpu/lint/probe.py:2: portagpu.lint.probe imports portagpu.runtime.launch"
    ]
