from __future__ import annotations

from pathlib import Path

import pytest

from portagpu.errors import ConfigError
from portagpu.lint.config import LintConfig, load_config, select_rules, with_overrides
from portagpu.lint.model import Rule


def _rule(rule_id: str) -> Rule:
    return Rule(rule_id, "n", "f", "python", "warning", ("rocm",), "m", "w", "r", "none", "c")


CATALOGUE = [_rule(i) for i in ("PG101", "PG102", "PG201", "PG501", "PG901")]


def _ids(rules) -> list[str]:
    return [r.id for r in rules]


def test_selection_most_specific_wins():
    assert _ids(select_rules(CATALOGUE, select=["ALL"], ignore=[], where="x")) == _ids(CATALOGUE)
    assert _ids(select_rules(CATALOGUE, select=["PG1"], ignore=["PG102"], where="x")) == ["PG101"]
    assert _ids(select_rules(CATALOGUE, select=["PG101"], ignore=["PG1"], where="x")) == ["PG101"]
    assert _ids(select_rules(CATALOGUE, select=["PG1"], ignore=["PG1"], where="x")) == []
    with pytest.raises(ConfigError, match="here.toml: unknown rule code or prefix 'PG777'"):
        select_rules(CATALOGUE, select=["PG777"], ignore=[], where="here.toml")


def _project(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.portagpu.lint]\n" + body)
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    return tmp_path


def test_nearest_pyproject_is_read(tmp_path):
    root = _project(
        tmp_path,
        'select = ["PG5"]\nignore = ["PG502"]\ntargets = ["rocm"]\nexclude = ["vendor/"]\n'
        'guard-names = ["is_hip"]\nguard-macros = ["USE_ROCM"]\n'
        'per-file-ignores = { "tests/*" = ["PG501"] }\n',
    )
    config = load_config(root / "src" / "pkg")
    assert config.root == root and config.source == str(root / "pyproject.toml")
    assert config.targets == ("rocm",) and config.exclude == ("vendor/",)
    ids = _ids(config.rules())
    assert ids and all(i.startswith("PG5") for i in ids) and "PG502" not in ids
    assert config.settings().guard_names == ("is_hip",)
    assert config.settings().guard_macros == ("USE_ROCM",)
    assert config.per_file_ignores == (("tests/*", ("PG501",)),)


def test_a_pyproject_without_our_section_is_skipped(tmp_path):
    root = _project(tmp_path, "")
    inner = root / "src" / "pkg"
    (inner / "pyproject.toml").write_text("[project]\nname = 'inner'\n")
    assert load_config(inner).root == root


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('selct = ["PG1"]\n', "unknown key"),
        ('select = ["PG999"]\n', "unknown rule code or prefix 'PG999'"),
        ('per-file-ignores = { "a.py" = ["XX1"] }\n', "unknown rule code or prefix 'XX1'"),
        ('targets = ["cuda"]\n', "unknown target"),
        ('select = "PG1"\n', "must be a list"),
        ('extend-rules = ["nope.yaml"]\n', "extend-rules file not found"),
        ("select = [\n", "invalid TOML"),
    ],
)
def test_bad_config_names_the_file(tmp_path, body, message):
    root = _project(tmp_path, body)
    with pytest.raises(ConfigError) as err:
        load_config(root)
    assert str(root / "pyproject.toml") in str(err.value) and message in str(err.value)


def test_extend_rules_adds_user_rules(tmp_path):
    rules = tmp_path / "lint" / "ours.yaml"
    rules.parent.mkdir()
    rules.write_text(
        "rules:\n  - {id: ACME100, name: acme, message: m, why: w, replacement: r, checker: c, tokens: [acme]}\n"
    )
    root = _project(tmp_path, 'extend-rules = ["lint/ours.yaml"]\n')
    assert "ACME100" in _ids(load_config(root).rules())


def test_command_line_overrides():
    config = LintConfig(select=("PG5",), ignore=("PG502",))
    assert _ids(with_overrides(config, select=["PG901"]).rules()) == ["PG901"]
    extended = with_overrides(config, extend_select=["PG901"], ignore=["PG501"])
    assert "PG901" in _ids(extended.rules()) and "PG501" not in _ids(extended.rules())
    assert with_overrides(config, targets=["mps", "cpu"]).targets == ("mps", "cpu")
    with pytest.raises(ConfigError, match="unknown target"):
        with_overrides(config, targets=["gfx90a"])
    with pytest.raises(ConfigError, match="PG1234"):
        with_overrides(config, ignore=["PG1234"])


def test_targets_filter_rules():
    rocm = _ids(LintConfig(targets=("rocm",)).rules())
    mps = _ids(LintConfig(targets=("mps",)).rules())
    assert any(i.startswith("PG5") for i in rocm)
    assert not any(i.startswith("PG5") for i in mps)  # warp-size rules matter on AMD only
