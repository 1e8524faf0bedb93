"""Engine selection and the hipify-perl path, with a stand-in script on PATH
(ROCm's hipify-perl is not installable here)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from portagpu.hipify_bridge import translate
from portagpu.hipify_bridge.engines import pick_engine

FAKE_PERL = f"""#!{sys.executable}
import sys
args = [a for a in sys.argv[1:] if not a.startswith("-")]
text = open(args[0]).read()
sys.stdout.write(text.replace("cudaMalloc", "hipMalloc"))
for n, line in enumerate(text.splitlines(), 1):
    if "cudaGraphInstantiateWithParams" in line:
        sys.stderr.write(f"{{args[0]}}:{{n}}: warning: unsupported HIP identifier: "
                         "cudaGraphInstantiateWithParams\\n")
sys.stderr.write("[HIPIFY] info: CONVERTED refs count: 1\\n")
"""


@pytest.fixture()
def fake_perl(tmp_path: Path, monkeypatch) -> Path:
    exe = tmp_path / "hipify-perl"
    exe.write_text(FAKE_PERL)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    return exe


def test_auto_prefers_hipify_perl_and_passes_its_warnings_on(fake_perl):
    assert pick_engine("auto") == "hipify-perl"
    src = ("void f(float** p) {\n  cudaMalloc(p, 4);\n"
           "  cudaGraphInstantiateWithParams(0, 0, 0);\n}\n"
           "__device__ float g(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n")
    tr = translate(src)
    assert tr.engine == "hipify-perl" and tr.report.engine == "hipify-perl"
    assert "hipMalloc(p, 4)" in tr.text
    assert "__shfl_down_sync(PORTAGPU_FULL_MASK, v, 1)" in tr.text  # warp fix still applied
    assert tr.report.warnings == [
        "line 3: unsupported HIP identifier: cudaGraphInstantiateWithParams"]
    assert any("CONVERTED refs" in note for note in tr.report.notes)


def test_builtin_table_is_used_without_hipify_or_torch(monkeypatch):
    import importlib.util

    monkeypatch.setenv("PATH", "/nonexistent")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    assert pick_engine("auto") == "builtin"
    tr = translate("cudaStream_t s; cudaStreamCreate(&s); cudaMallocHost(0, 0);\n")
    assert tr.engine == "builtin"
    assert tr.text.startswith("hipStream_t s; hipStreamCreate(&s);")
    assert "cudaMallocHost" in tr.text  # not a prefix match of cudaMalloc
    assert any("built-in table" in note for note in tr.report.notes)


def test_missing_torch_is_a_clear_error_for_the_torch_engine(monkeypatch):
    from portagpu.hipify_bridge import engines, torch_tables
    from portagpu.hipify_bridge.engines import EngineUnavailable

    engines.torch_tables.cache_clear()
    monkeypatch.setitem(sys.modules, "torch.utils.hipify", None)  # import now fails
    monkeypatch.setattr(torch_tables, "torch_version", lambda: None)  # and no cached tables
    try:
        with pytest.raises(EngineUnavailable, match="need torch"):
            translate("cudaMalloc(0, 0);\n", engine="torch")
    finally:
        engines.torch_tables.cache_clear()


def test_cached_torch_tables_rename_exactly_as_torchs_own_regex(tmp_path, monkeypatch):
    hipify_python = pytest.importorskip("torch.utils.hipify.hipify_python")
    from portagpu.hipify_bridge import torch_tables

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = torch_tables.load()  # from torch: writes the cache
    assert list(tmp_path.joinpath("portagpu").glob("hipify-torch-*.json"))
    monkeypatch.setattr(torch_tables, "_from_torch", lambda: pytest.fail("cache not used"))
    pattern, table = torch_tables.load()
    assert table == first[1] == dict(hipify_python.PYTORCH_MAP)
    names = list(table)
    text = "\n" + " ".join(f"{n}{sep}" for n in names for sep in (" ", "(", ".x", "::y", "z"))
    ours = pattern.sub(lambda m: table.get(m.group(0), m.group(0)), text)
    theirs = hipify_python.RE_PYTORCH_PREPROCESSOR.sub(
        lambda m: hipify_python.PYTORCH_MAP[m.group(0)], text)
    assert ours == theirs
