"""What each idiom does off CUDA decides whether and how it is reported:
raises -> PG101, returns 0 -> PG108 (info), harmless -> nothing; deprecations
are not ROCm breaks; version-gated code is never reported or rewritten."""

from __future__ import annotations

from portagpu.lint.config import LintConfig
from portagpu.lint.engine import lint_one


def _codes(
    text: str, targets=("rocm", "mps", "cpu"), path: str = "mod.py"
) -> list[tuple[int, str]]:
    outcome = lint_one(text, path, LintConfig(targets=tuple(targets), cache=False, jobs=1))
    return [(f.line, f.code) for f in outcome.findings]


def test_torch_cuda_calls_split_by_effect_off_cuda() -> None:
    code = (
        "import torch\n"
        "n = torch.cuda.device_count()\n"  # 0 off CUDA
        "ok = torch.cuda.is_available()\n"  # False
        "torch.cuda.manual_seed_all(0)\n"  # no-op
        "torch.cuda.empty_cache()\n"  # no-op
        "used = torch.cuda.memory_allocated()\n"  # 0: misleads
        "torch.cuda.synchronize()\n"  # raises
        "name = torch.cuda.get_device_name(0)\n"  # raises
    )
    assert _codes(code) == [(6, "PG108"), (7, "PG101"), (8, "PG101")]


def test_replacements_name_a_guard_that_works_without_an_accelerator() -> None:
    outcome = lint_one("import torch\ntorch.cuda.synchronize()\n", "m.py", LintConfig(cache=False))
    (finding,) = outcome.findings
    assert "torch.accelerator.is_available()" in finding.message
    assert (
        finding.fix is not None and finding.fix.edits == ()
    )  # no rewrite to a call that raises on CPU


def test_deprecated_amp_is_not_a_rocm_break() -> None:
    code = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"
    assert _codes(code, targets=("rocm",)) == []
    assert _codes(code, targets=("mps",)) == [(2, "PG104")]


def test_a_cuda_autocast_is_said_to_turn_off_not_to_fail() -> None:
    """torch.autocast("cuda") without CUDA warns and disables itself (the code then
    runs in full precision); a cuda tensor device raises. The messages differ."""
    code = (
        "import torch\n"
        "x = torch.zeros(3, device='cuda')\n"
        "with torch.autocast('cuda'):\n"
        "    pass\n"
        "with torch.amp.autocast(device_type='cuda'):\n"
        "    pass\n"
    )
    outcome = lint_one(code, "m.py", LintConfig(targets=("mps",), cache=False, jobs=1))
    messages = {f.line: f.message for f in outcome.findings if f.code == "PG103"}
    assert sorted(messages) == [2, 3, 5]
    assert "fails where there is no CUDA device" in messages[2]
    assert all(
        "turns itself off" in messages[line] and "fails" not in messages[line] for line in (3, 5)
    )


def test_nccl_and_visible_devices_are_target_aware() -> None:
    code = (
        "import os\nimport torch.distributed as dist\n"
        "os.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"
        "dist.init_process_group(backend='nccl')\n"
    )
    assert _codes(code, targets=("rocm",)) == [(3, "PG803")]  # RCCL answers to "nccl" on ROCm
    assert _codes(code, targets=("cpu",)) == [(4, "PG801")]


def test_version_gated_code_is_the_old_path() -> None:
    code = (
        "import torch\n"
        "if torch.__version__ >= '2.4':\n"
        "    fwd = torch.amp.custom_fwd(device_type='cuda')\n"
        "else:\n"
        "    fwd = torch.cuda.amp.custom_fwd\n"
        "def make():\n"
        "    if is_torch_version('>=', '2.3'):\n"
        "        return torch.amp.GradScaler('cuda')\n"
        "    return torch.cuda.amp.GradScaler()\n"
        "scaler = torch.cuda.amp.GradScaler()\n"
    )
    assert _codes(code, targets=("mps",)) == [(10, "PG104")]


def test_a_finding_on_a_multi_line_chain_points_at_its_attribute() -> None:
    code = "import torch\nnet = (\n    torch.nn.Linear(2, 2)\n    .float()\n    .cuda()\n)\n"
    outcome = lint_one(code, "m.py", LintConfig(cache=False))
    assert [(f.line, f.col, f.code) for f in outcome.findings] == [(5, 6, "PG102")]


def test_probe_variables_and_gpu_counts_are_guards() -> None:
    code = (
        "import torch\n"
        "has_gpu = torch.cuda.device_count() > 0\n"
        "if has_gpu:\n"
        "    torch.cuda.synchronize()\n"
        "def init(num_gpus):\n"
        "    if num_gpus > 0:\n"
        "        torch.cuda.set_device(0)\n"
    )
    assert _codes(code) == []
