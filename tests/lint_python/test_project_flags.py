"""A guard flag computed in one project module and tested in another
(portagpu/lint/python/project_flags.py): the flag's name says nothing of a
device, so the other module is read for what it was assigned."""

from __future__ import annotations

from pathlib import Path

from portagpu.lint.config import LintConfig
from portagpu.lint.engine import lint_paths

GUARDS = "import torch\n\nHAS_FAST_PATH = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)\n"
USE = (
    "import torch\n{import_line}\n\n\ndef ids(n):\n"
    "    if HAS_FAST_PATH:\n        return torch.zeros(n, device=\"cuda\")\n    return torch.zeros(n)\n"
)


def _codes(root: Path) -> list[tuple[str, int, str]]:
    result = lint_paths([root], LintConfig(cache=False))
    return [(Path(f.path).name, f.line, f.code) for f in result.findings]


def _package(root: Path, guards: str = GUARDS, import_line: str = "from pkg._flags import HAS_FAST_PATH") -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "_flags.py").write_text(guards)
    (root / "pkg" / "masks.py").write_text(USE.format(import_line=import_line))


def test_a_flag_imported_from_a_project_module_guards_the_cuda_branch(tmp_path):
    _package(tmp_path)
    assert _codes(tmp_path) == []


def test_a_relative_import_and_a_package_re_export_are_followed(tmp_path):
    _package(tmp_path, import_line="from ._flags import HAS_FAST_PATH")
    assert _codes(tmp_path) == []
    (tmp_path / "pkg" / "__init__.py").write_text("from ._flags import HAS_FAST_PATH\n")
    (tmp_path / "pkg" / "masks.py").write_text(USE.format(import_line="from pkg import HAS_FAST_PATH"))
    assert _codes(tmp_path) == []


def test_a_flag_that_probes_no_device_guards_nothing(tmp_path):
    _package(tmp_path, guards="import os\n\nHAS_FAST_PATH = os.environ.get('FAST') == '1'\n")
    assert _codes(tmp_path) == [("masks.py", 7, "PG103")]


def test_an_import_the_project_does_not_hold_guards_nothing(tmp_path):
    (tmp_path / "masks.py").write_text(USE.format(import_line="from elsewhere.flags import HAS_FAST_PATH"))
    assert _codes(tmp_path) == [("masks.py", 7, "PG103")]


def test_an_edited_flags_module_is_read_again(tmp_path):
    _package(tmp_path, guards="import os\n\nHAS_FAST_PATH = os.environ.get('FAST') == '1'\n")
    assert _codes(tmp_path) != []
    (tmp_path / "pkg" / "_flags.py").write_text(GUARDS + "# edited\n")
    assert _codes(tmp_path) == []


def test_a_cached_file_is_linted_again_when_the_flags_module_changes(tmp_path):
    """The findings of masks.py depend on pkg/_flags.py: the warm run must not
    answer from the cache once the flag stops probing CUDA."""
    import os

    _package(tmp_path)
    config = LintConfig(root=tmp_path)
    assert lint_paths([tmp_path], config).findings == []
    assert lint_paths([tmp_path], config).findings == []  # warm: from the cache
    flags = tmp_path / "pkg" / "_flags.py"
    flags.write_text("import os\n\nHAS_FAST_PATH = os.environ.get('FAST') == '1'\n")
    os.utime(flags, ns=(1, 1))  # a different mtime even on a coarse clock
    assert [(f.line, f.code) for f in lint_paths([tmp_path], config).findings] == [(7, "PG103")]


def test_module_files_are_found_as_python_finds_them(tmp_path):
    from portagpu.lint.python.project_flags import module_file

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/__init__.py", "pkg/_flags.py", "pkg/sub/__init__.py", "pkg/sub/m.py", "pkg.py"):
        (tmp_path / name).write_text("")
    here = str(tmp_path / "pkg" / "sub" / "m.py")
    assert module_file(here, "pkg._flags", 0) == str(tmp_path / "pkg" / "_flags.py")  # absolute, found upwards
    assert module_file(here, "_flags", 2) == str(tmp_path / "pkg" / "_flags.py")  # from .._flags
    assert module_file(here, "", 1) == str(tmp_path / "pkg" / "sub" / "__init__.py")  # from . import X
    assert module_file(str(tmp_path / "pkg" / "_flags.py"), "", 1) == str(tmp_path / "pkg" / "__init__.py")
    assert module_file(here, "nowhere.flags", 0) is None
    assert module_file(here, "", 40) is None  # dots above the file system root
