"""Dependency lists: requirements*.txt and pyproject.toml are discovered and
read for pins that lock a project to NVIDIA (PG308) and the deprecated pynvml
package (PG203); a project that already has a ROCm story is left alone."""

from __future__ import annotations

from pathlib import Path

from portagpu.cli import main
from portagpu.lint.config import LintConfig
from portagpu.lint.discovery import Candidate, discover
from portagpu.lint.engine import lint_paths

PINNED = """\
# training stack
numpy>=1.26
--extra-index-url https://download.pytorch.org/whl/cu121
torch==2.3.1+cu121  # the CUDA 12.1 build
cupy-cuda12x>=13
nvidia-nccl-cu12==2.20.5
pynvml
"""


def _lint(root: Path, *paths: Path, select=("PG308", "PG203")):
    config = LintConfig(root=root, select=select, cache=False, jobs=1)
    return lint_paths(list(paths), config)


def test_discovery_picks_dependency_files_only(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("requirements.txt", "requirements-dev.txt", "requirements/gpu.txt", "pyproject.toml",
                 "notes.txt", "docs/conf.toml", "constraints.txt"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    found = sorted(
        (Path(i.path).as_posix(), i.language)
        for i in discover(["."], root=tmp_path)
        if isinstance(i, Candidate)
    )
    assert found == [
        ("constraints.txt", "deps"),
        ("pyproject.toml", "deps"),
        ("requirements-dev.txt", "deps"),
        ("requirements.txt", "deps"),
        ("requirements/gpu.txt", "deps"),
    ]


def test_each_pinned_line_is_reported_with_its_rocm_counterpart(tmp_path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text(PINNED)
    found = [(f.line, f.code, f.col) for f in _lint(tmp_path, req).findings]
    assert found == [
        (3, "PG308", 27),
        (4, "PG308", 13),
        (5, "PG308", 1),
        (6, "PG308", 1),
        (7, "PG203", 1),
    ]
    messages = {f.line: f.message for f in _lint(tmp_path, req).findings}
    assert "rocm6.4" in messages[3] and "+rocmX.Y" in messages[4] and "cupy-rocm" in messages[5]


def test_pyproject_index_and_extras(tmp_path) -> None:
    project = tmp_path / "pyproject.toml"
    project.write_text(
        '[project]\nname = "x"\ndependencies = ["torch", "jax[cuda12]"]\n\n'
        '[[tool.uv.index]]\nname = "cu"\nurl = "https://download.pytorch.org/whl/cu128"  # GPU wheels\n'
    )
    assert [f.line for f in _lint(tmp_path, project).findings] == [3, 7]


def test_a_project_with_a_rocm_story_is_left_alone(tmp_path) -> None:
    # the file names ROCm itself
    a = tmp_path / "a" / "pyproject.toml"
    a.parent.mkdir()
    a.write_text(
        '[project.optional-dependencies]\ncuda = ["cupy-cuda12x"]\nrocm = ["cupy-rocm-5-0"]\n'
    )
    # a sibling file is the AMD one
    b = tmp_path / "b" / "requirements.txt"
    b.parent.mkdir()
    b.write_text(PINNED)
    (tmp_path / "b" / "requirements_amd.txt").write_text("torch\n")
    # the file is the CUDA one
    c = tmp_path / "c" / "requirements-cu121.txt"
    c.parent.mkdir()
    c.write_text(PINNED)
    found = _lint(tmp_path, a, b, c, select=("PG308",)).findings
    assert found == []


def test_noqa_and_add_noqa_use_hash_comments(tmp_path, capsys) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("cupy-cuda12x  # noqa: PG308\nonnxruntime-gpu\n")
    assert [f.line for f in _lint(tmp_path, req).findings] == [2]
    assert main(["lint", "--no-cache", "--select", "PG308", "--add-noqa", str(req)]) == 0
    capsys.readouterr()
    assert req.read_text() == "cupy-cuda12x  # noqa: PG308\nonnxruntime-gpu  # noqa: PG308\n"
    assert _lint(tmp_path, req).findings == []


def test_setup_py_requirements(tmp_path) -> None:
    setup = tmp_path / "setup.py"
    setup.write_text(
        "from setuptools import setup\n"
        "setup(\n    name='x',\n    install_requires=['numpy'],\n"
        "    extras_require={'gpu': ['cupy-cuda12x', 'nvidia-cudnn-cu12']},\n)\n"
    )
    assert [(f.line, f.code) for f in _lint(tmp_path, setup).findings] == [
        (5, "PG308"),
        (5, "PG308"),
    ]


def test_an_extra_named_for_a_cuda_build_is_not_a_pin(tmp_path) -> None:
    """uv's `conflicts` and `sources` tables name extras (`{ extra = "torch-cu12" }`):
    no package there; the extra's own dependencies are still read."""
    project = tmp_path / "pyproject.toml"
    project.write_text(
        '[project]\nname = "x"\n[project.optional-dependencies]\n'
        'torch-cu12 = ["torch==2.5.1+cu121"]\n'
        '[tool.uv]\nconflicts = [\n  [\n    { extra = "torch-cu12" },\n    { extra = "torch-cu13" },\n  ],\n]\n'
        '[tool.uv.sources]\ntorch = [{ index = "pytorch-cu124", extra = "torch-cu12" }]\n'
    )
    lines = [f.line for f in _lint(tmp_path, project, select=("PG308",)).findings]
    assert lines == [4]  # the pinned CUDA build in the extra, nothing in uv's tables
