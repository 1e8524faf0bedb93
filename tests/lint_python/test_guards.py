"""Guards: vendor-specific code that is deliberate is not a finding."""

from __future__ import annotations

import pytest

GUARDED = {
    "hip-version": "import torch\nif torch.version.hip:\n    pass\nelse:\n    torch.cuda.synchronize()\n",
    "is-hip-call": "import torch\nif is_hip():\n    x = 1\nelse:\n    torch.cuda.synchronize()\n",
    "availability-with-fallback": "import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\nelse:\n    pass\n",
    "device-type": "import torch\ndef f(x):\n    if x.device.type == 'cuda':\n        torch.cuda.synchronize()\n",
    "is-cuda-attr": "def f(x, y):\n    if x.is_cuda:\n        y = y.cuda()\n    return y\n",
    "early-return": "import torch\ndef f():\n    if not torch.cuda.is_available():\n        return\n    torch.cuda.synchronize()\n",
    "assert": "import torch\ndef f():\n    assert torch.cuda.is_available()\n    torch.cuda.synchronize()\n",
    "ternary": "import torch\nd = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
    "and-chain": "def f(x, y):\n    return x.is_cuda and y.cuda()\n",
    "skipif": "import torch, unittest\n@unittest.skipIf(not torch.cuda.is_available(), 'no cuda')\ndef test_x():\n    torch.cuda.synchronize()\n",
    "vendor-decorator": "import torch\n@onlyCUDA\ndef test_x(device):\n    torch.cuda.synchronize()\n",
    "vendor-function": "import torch\ndef _cuda_sync():\n    torch.cuda.synchronize()\n",
    "accelerator-subclass": "import torch\nclass MyAccel(DeepSpeedAccelerator):\n    def sync(self):\n        torch.cuda.synchronize()\n",
    "vendor-class": "import torch\nclass CudaInterface(DeviceInterface):\n    def sync(self):\n        torch.cuda.synchronize()\n",
    "match-case": "def f(x, device):\n    match device.type:\n        case 'cuda':\n            return x.cuda()\n        case _:\n            return x\n",
    "hasattr-probe": "import torch\nif hasattr(torch, 'xpu'):\n    pass\nelse:\n    torch.cuda.synchronize()\n",
}


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_guarded_code_is_quiet(lint, name: str) -> None:
    found = [f for f in lint(GUARDED[name]) if f.code in ("PG101", "PG102", "PG103")]
    assert found == [], name


def test_user_guard_names(lint) -> None:
    code = "import torch\nif on_big_box():\n    torch.cuda.synchronize()\n"
    assert [f.code for f in lint(code, select=("PG101",))] == ["PG101"]
    assert lint(code, select=("PG101",), guard_names=("on_big_box",)) == []


def test_backend_package_path_is_a_guard(lint) -> None:
    code = "import torch\ntorch.cuda.synchronize()\n"
    assert lint(code, path="pkg/cuda/streams.py", select=("PG101",)) == []
    # a file named for a vendor's side of a dispatch is that backend
    for path in ("pkg/cuda_backend.py", "pkg/_cuda.py", "ops/attention_sm90.py"):
        assert lint(code, path=path, select=("PG101",)) == [], path
    # a vendor word beside a topic names what the file is about, not a backend
    for path in ("pkg/common_cuda.py", "demo/ptx_assembly.py", "pkg/cuda_kernels.py"):
        assert [f.code for f in lint(code, path=path, select=("PG101",))] == ["PG101"], path
    assert [f.code for f in lint(code, path="pkg/train.py", select=("PG101",))] == ["PG101"]
    # a vendor word in a directory above the project is not a backend marker
    for path in ("/elsewhere/hip/work/project/src/train.py", "cuda-experiments/train.py"):
        assert [f.code for f in lint(code, path=path, select=("PG101",))] == ["PG101"], path
    assert lint(code, path="/elsewhere/site-packages/torch/cuda/x.py", select=("PG101",)) == []


UNGUARDED = {
    "plain": "import torch\ntorch.cuda.synchronize()\n",
    "unrelated-if": "import torch\nif verbose:\n    torch.cuda.synchronize()\n",
    "cpu-check-else": "def f(x, device):\n    if device.type == 'cpu':\n        return x\n    return x.cuda()\n",
    "after-non-terminating-if": "import torch\nif torch.cuda.is_available():\n    print('gpu')\ntorch.cuda.synchronize()\n",
    "plain-class": "import torch\nclass Trainer(Base):\n    def step(self):\n        torch.cuda.synchronize()\n",
    "relationship-word": "import torch\nif relationship:\n    torch.cuda.synchronize()\n",
}


@pytest.mark.parametrize("name", sorted(UNGUARDED))
def test_unguarded_code_is_reported(lint, name: str) -> None:
    assert [f for f in lint(UNGUARDED[name]) if f.code in ("PG101", "PG102")], name


def test_device_check_does_not_guard_rocm_rules(lint) -> None:
    # torch.cuda.is_available() is true on ROCm, so a wave64 problem still matters
    code = "import torch\nif torch.cuda.is_available():\n    k[g](x, num_warps=32)\n"
    assert [f.code for f in lint(code, select=("PG401",))] == ["PG401"]
    hip = "import torch\nif torch.version.hip:\n    pass\nelse:\n    k[g](x, num_warps=32)\n"
    assert lint(hip, select=("PG401",)) == []


def test_guard_respects_selected_targets(lint) -> None:
    # an MPS check covers mps only: with cpu among the targets the finding stays
    code = "import torch\nif torch.backends.mps.is_available():\n    pass\nelse:\n    x.cuda()\n"
    assert [f.code for f in lint(code, select=("PG102",))] == ["PG102"]
    assert lint(code, select=("PG102",), targets=("mps",)) == []


def test_optional_import_is_not_a_finding(lint) -> None:
    code = "try:\n    import numba.cuda\nexcept ImportError:\n    numba = None\n"
    assert lint(code, select=("PG303",)) == []
    assert [f.code for f in lint("import numba.cuda\n", select=("PG303",))] == ["PG303"]


def test_amd_path_in_file_silences_telemetry(lint) -> None:
    nv_only = "import pynvml\npynvml.nvmlInit()\n"
    assert [f.code for f in lint(nv_only, select=("PG201",))] == ["PG201"]
    both = nv_only + "import amdsmi\n"
    assert lint(both, select=("PG201",)) == []


def test_a_file_named_cuda_is_a_dispatch_side_only_beside_another_side(tmp_path) -> None:
    """cuda.py beside cpu.py, rocm.py or an mps/ folder is one side of a
    dispatch; among unrelated helpers it is a module about CUDA, linted as such."""
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_paths

    code = "import torch\n\ndef sync():\n    torch.cuda.synchronize()\n"
    layouts = {
        "helpers": (["log.py", "checkpoint.py"], ["PG101"]),
        "with_cpu": (["cpu.py"], []),
        "with_rocm": (["rocm.py"], []),
        "with_mps_folder": (["mps/__init__.py"], []),
        "with_torch_path": (["torch_impl.py"], []),
    }
    for name, (siblings, expected) in layouts.items():
        folder = tmp_path / name
        for sibling in siblings:
            (folder / sibling).parent.mkdir(parents=True, exist_ok=True)
            (folder / sibling).write_text("x = 1\n")
        (folder / "cuda.py").write_text(code)
        result = lint_paths([folder / "cuda.py"], LintConfig(select=("PG101",), cache=False))
        assert [f.code for f in result.findings] == expected, name


def test_a_folder_named_for_nvidia_is_a_dispatch_side_only_beside_another_side(tmp_path) -> None:
    """mylib/cuda/ops.py beside mylib/cpu/ (or rocm/, a reference.py) is one
    side of a dispatch; a cuda/ folder with no counterpart is the project's
    only path and is checked. An AMD-named folder is always AMD's side."""
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_paths

    code = "import torch\n\ndef sync():\n    torch.cuda.synchronize()\n"
    layouts = {
        "alone": ("cuda", ["utils.py"], ["PG101"]),
        "beside_cpu": ("cuda", ["cpu/__init__.py"], []),
        "beside_reference": ("nvidia", ["reference.py"], []),
        "amd_folder": ("rocm", [], []),
    }
    for name, (vendor, siblings, expected) in layouts.items():
        package = tmp_path / name / "mylib"
        for sibling in siblings:
            (package / sibling).parent.mkdir(parents=True, exist_ok=True)
            (package / sibling).write_text("x = 1\n")
        module = package / vendor / "ops.py"
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text(code)
        result = lint_paths([module], LintConfig(select=("PG101",), cache=False))
        assert [f.code for f in result.findings] == expected, name


def test_a_module_named_for_nvidia_beside_its_amd_twin_is_one_side_of_a_pair(tmp_path) -> None:
    """gpu_nvidia.py beside gpu_amd.py (a dispatcher picks one) is NVIDIA's side:
    its NVML use needs no AMD path of its own; alone, it does."""
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_paths

    for name, siblings, expected in (("alone", ["gpu.py"], ["PG201"]), ("paired", ["gpu.py", "gpu_amd.py"], [])):
        folder = tmp_path / name
        folder.mkdir()
        for sibling in siblings:
            (folder / sibling).write_text("x = 1\n")
        (folder / "gpu_nvidia.py").write_text("import pynvml\npynvml.nvmlInit()\n")
        result = lint_paths([folder / "gpu_nvidia.py"], LintConfig(select=("PG201",), cache=False))
        assert [f.code for f in result.findings] == expected, name


def test_a_class_named_for_cuda_is_a_dispatch_side_only_beside_another_side(tmp_path) -> None:
    """`class CudaRNGTracker:` with no CPU/MPS/ROCm counterpart (in the module
    or a sibling file) is a class about CUDA: its torch.cuda calls are checked.
    A counterpart, or a device base class, keeps it one side of a dispatch."""
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_paths

    tracker = "import torch\n\nclass CudaRNGTracker:\n    def save(self):\n        return torch.cuda.get_rng_state()\n"
    layouts = {
        "alone": ({"state.py": tracker}, ["PG101"]),
        "cpu_class_beside": ({"state.py": tracker + "\nclass CpuRNGTracker:\n    pass\n"}, []),
        "cpu_file_beside": ({"state.py": tracker, "cpu_state.py": "x = 1\n"}, []),
        "device_base": ({"state.py": tracker.replace("CudaRNGTracker:", "CudaRNGTracker(Accelerator):")}, []),
    }
    for name, (files, expected) in layouts.items():
        for file, text in files.items():
            (tmp_path / name / file).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name / file).write_text(text)
        result = lint_paths([tmp_path / name / "state.py"], LintConfig(select=("PG101",), cache=False))
        assert [f.code for f in result.findings] == expected, name
