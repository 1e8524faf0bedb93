"""`portagpu check-kernels`: tables, JSON, SARIF and exit codes (compiles share the
session's cache with test_compile.py)."""

import json
from pathlib import Path

import pytest

from portagpu.cli import main

from .conftest import SAMPLES, needs_triton_backends

SARIF_SCHEMA = Path(__file__).parents[1] / "lint" / "sarif-schema-2.1.0.json"


def run(capsys, *argv):
    code = main(["check-kernels", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@needs_triton_backends()
def test_table_names_each_kernel_target_and_verdict(capsys, kc_cache_dir):
    code, out, _ = run(
        capsys, str(SAMPLES), "--target", "gfx942,sm_90", "--cache-dir", kc_cache_dir
    )
    assert code == 1  # add_kernel's nw=32 and sm_id_kernel cannot run on gfx942
    rows = {
        (line.split()[0], line.split()[-1] if "fits" in line else "") for line in out.splitlines()
    }
    assert ("add_kernel", "fits") in rows
    wide = [
        line
        for line in out.splitlines()
        if line.startswith("add_kernel") and " gfx942 " in line and "nw=32" in line
    ]
    assert "2048/1024" in wide[0] and "FAILS (launch raises OutOfResources)" in wide[0]
    assert "no_declaration_kernel" in out and "not checked" in out  # named, with how to declare it
    assert "portagpu kernelcheck: " in out.splitlines()[-1]


@needs_triton_backends()
def test_json_and_sarif(capsys, kc_cache_dir, tmp_path):
    code, out, _ = run(
        capsys, str(SAMPLES), "-t", "gfx942", "--format", "json", "--cache-dir", kc_cache_dir
    )
    data = json.loads(out)
    assert code == 1 and data["summary"]["failures"] == 2 and data["targets"][0]["name"] == "gfx942"
    assert {c["name"] for c in data["checks"] if c["blocking"]} == {
        "add_kernel",
        "sm_id_kernel",
    }
    sarif_path = tmp_path / "kernels.sarif"
    code, _, err = run(
        capsys,
        str(SAMPLES),
        "-t",
        "gfx942",
        "--format",
        "sarif",
        "-o",
        str(sarif_path),
        "--cache-dir",
        kc_cache_dir,
        "--exit-zero",
    )
    assert code == 0 and "report in" in err
    sarif = json.loads(sarif_path.read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    errors = [r for r in sarif["runs"][0]["results"] if r["level"] == "error"]
    assert {r["ruleId"] for r in errors} == {"PGK001", "PGK004"}
    uri = errors[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.endswith("kernelcheck_samples.py")


def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, str(tmp_path / "missing.py"))
    assert code == 2 and "missing.py: no such file" in err
    code, _, err = run(capsys, str(SAMPLES), "--target", "gfx942,nope")
    assert code == 2 and "unknown target 'nope'" in err
    broken = tmp_path / "broken_kernels.py"
    broken.write_text("def f(:\n")
    code, _, err = run(capsys, str(broken))
    assert code == 2 and "broken_kernels.py:1: not valid Python" in err
    code, _, err = run(capsys)
    assert code == 2 and "--builtin" in err
