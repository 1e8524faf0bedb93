"""ci/validate.sh and the workflows it checks.

Each broken-workflow case copies a shipped file, breaks it in one way, and
proves validation fails naming that file; the shipped files must pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "ci"
VALIDATE = CI / "validate.sh"
MATRIX = CI / "github" / "portagpu-matrix.yml"
CALLERS = [CI / "github" / "portagpu.yml", CI / "github" / "portagpu-self.yml"]
HOOKS = ROOT / ".pre-commit-hooks.yaml"

needs_validator = pytest.mark.skipif(
    shutil.which("check-jsonschema") is None, reason="check-jsonschema is not installed"
)


def validate(*files: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run(["bash", str(VALIDATE), *map(str, files)], capture_output=True,
                          text=True, env=env, timeout=120)


def broken_copy(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert old in text, f"the test's anchor {old!r} is gone from {source.name}"
    target = tmp_path / source.name
    target.write_text(text.replace(old, new, 1))
    return target


@needs_validator
def test_shipped_workflows_and_hooks_validate():
    result = validate()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "GitHub workflow schema: 3 file(s)" in result.stdout


BREAKAGES = {
    "job without runs-on": (MATRIX, "    runs-on: ubuntu-24.04\n", ""),
    "misspelled steps key": (MATRIX, "    steps:\n      - uses: actions/checkout",
                             "    step:\n      - uses: actions/checkout"),
    "bad input type": (MATRIX, "        type: boolean\n        default: false\n",
                       "        type: bool\n        default: false\n"),
    "YAML syntax": (MATRIX, "jobs:\n  cpu:\n", "jobs:\n  cpu: [\n"),
    "duplicate key": (MATRIX, "    env:\n      PORTAGPU_DEVICE: cpu\n",
                      "    env:\n      PORTAGPU_DEVICE: cpu\n      PORTAGPU_DEVICE: cuda\n"),
    "undeclared input used": (MATRIX, "${{ inputs.pytest-args }}", "${{ inputs.pytest_args }}"),
    "unknown step id": (MATRIX, "steps.lint.outputs.status == '1'",
                        "steps.sarif.outputs.status == '1'"),
    "renamed portagpu flag": (MATRIX, "--format sarif", "--formats sarif"),
    "runs-on default not JSON": (MATRIX, "default: '[\"self-hosted\", \"linux\", \"nvidia\"]'",
                                 "default: self-hosted"),
}


@needs_validator
@pytest.mark.parametrize("case", sorted(BREAKAGES))
def test_broken_reusable_workflow_fails_validation(tmp_path, case):
    source, old, new = BREAKAGES[case]
    broken = broken_copy(tmp_path, source, old, new)
    result = validate(broken)
    assert result.returncode != 0, f"{case}: validation passed\n{result.stdout}{result.stderr}"
    assert broken.name in result.stdout + result.stderr


@needs_validator
@pytest.mark.parametrize("old, new, message", [
    ("      lint-targets: ", "      lint-target: ", "passes 'lint-target', which portagpu-matrix.yml"),
    ("      nvidia: ${{ vars.PORTAGPU_NVIDIA_RUNS_ON != '' }}", "      nvidia: \"yes\"",
     "'nvidia' is a boolean input"),
    ("uses: ./.github/workflows/portagpu-matrix.yml", "uses: ./.github/workflows/matrix.yml",
     "calls matrix.yml, which is not beside it"),
])
def test_broken_caller_fails_validation(tmp_path, old, new, message):
    shutil.copy(MATRIX, tmp_path / MATRIX.name)
    broken = broken_copy(tmp_path, CALLERS[0], old, new)
    result = validate(broken)
    assert result.returncode != 0
    assert message in result.stderr


@needs_validator
@pytest.mark.parametrize("old, new", [
    ("language: python", "language: pyhton"),
    ("  require_serial: true\n", "  require_serial: yes please\n"),
    ("entry: portagpu lint --force-exclude\n", "entry: portagpu lint --formats github\n"),
    ("- id: portagpu-lint\n", "- id: portagpu-lint\n  pass_filename: false\n"),
])
def test_broken_hook_manifest_fails_validation(tmp_path, old, new):
    broken = broken_copy(tmp_path, HOOKS, old, new)
    schema = subprocess.run(
        ["check-jsonschema", "--schemafile", str(CI / "schemas" / "pre-commit-hooks.schema.json"),
         str(broken)], capture_output=True, text=True)
    commands = subprocess.run([sys.executable, str(CI / "check_workflows.py"), "--hooks",
                               str(broken)], capture_output=True, text=True)
    assert schema.returncode != 0 or commands.returncode != 0


# --- what the shipped workflows promise ---------------------------------------

def jobs() -> dict:
    return yaml.safe_load(MATRIX.read_text())["jobs"]


def runs(job: dict) -> list[str]:
    return [step.get("run", "") for step in job["steps"]]


@pytest.mark.parametrize("name, backend", [("cpu", "cpu"), ("nvidia", "cuda"), ("amd", "rocm")])
def test_each_job_forces_its_backend_shows_the_device_then_tests(name, backend):
    job = jobs()[name]
    assert job["env"]["PORTAGPU_DEVICE"] == backend
    commands = runs(job)
    info = commands.index("portagpu info")
    tests = next(i for i, run in enumerate(commands) if "python -m pytest" in run)
    assert info < tests


def test_gpu_jobs_are_opt_in_and_never_run_fork_pull_requests():
    for name in ("nvidia", "amd"):
        condition = jobs()[name]["if"]
        assert f"inputs.{name}" in condition
        assert "github.event.pull_request.head.repo.full_name == github.repository" in condition
        assert "fromJSON(inputs." in jobs()[name]["runs-on"]


def test_amd_job_runs_in_a_rocm_container_with_the_gpu_devices():
    container = jobs()["amd"]["container"]
    assert container["image"] == "${{ inputs.amd-image }}"
    on = yaml.safe_load(MATRIX.read_text())[True]  # YAML 1.1 reads `on` as true
    options = on["workflow_call"]["inputs"]["amd-container-options"]["default"]
    assert "--device=/dev/kfd" in options and "--device=/dev/dri" in options


def test_cpu_job_lints_to_code_scanning_and_pull_requests_and_checks_hipify():
    steps = jobs()["cpu"]["steps"]
    uses = [step.get("uses", "") for step in steps]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    commands = " ".join(runs(jobs()["cpu"]))
    assert "--format sarif" in commands and "--format github" in commands
    assert "apt-get install -y --no-install-recommends hipcc" in commands
    hipify = next(step for step in steps if "portagpu hipify --check" in step.get("run", ""))
    assert hipify["env"]["HIP_PLATFORM"] == "amd"


@needs_validator
def test_installed_copies_must_match_the_shipped_workflows(tmp_path):
    """portagpu's own .github/workflows runs the very files users copy from ci/github."""
    shutil.copytree(CI, tmp_path / "ci")
    shutil.copy(HOOKS, tmp_path / HOOKS.name)
    installed = tmp_path / ".github" / "workflows"
    installed.mkdir(parents=True)
    for name in ("portagpu-matrix.yml", "portagpu-self.yml"):
        shutil.copy(CI / "github" / name, installed / name)
    script = tmp_path / "ci" / "validate.sh"
    env = {**os.environ, "PYTHON": sys.executable}
    same = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "GitHub workflow schema: 5 file(s)" in same.stdout
    with (installed / "portagpu-matrix.yml").open("a") as drifted:
        drifted.write("# edited in place\n")
    drift = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert drift.returncode != 0
    assert "portagpu-matrix.yml differs from" in drift.stderr
