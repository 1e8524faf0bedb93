"""Issue 13 item 19: standard input is linted like a file: read as bytes
(BOM, PEP 263 coding), `-` as a path, and -o, --diff, --add-noqa,
--statistics honoured."""

from __future__ import annotations

import io
import json
import sys

import pytest

from portagpu.cli import main

SYNC = b"import torch\ntorch.cuda.synchronize()\n"
AMP = b"import torch\nctx = torch.cuda.amp.autocast()\n"


@pytest.fixture
def run_stdin(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)

    def run(argv: list[str], data: bytes) -> tuple[int, bytes, str]:
        stdin = io.TextIOWrapper(io.BytesIO(data))
        stdout = io.TextIOWrapper(io.BytesIO(), write_through=True)
        stderr = io.StringIO()
        monkeypatch.setattr(sys, "stdin", stdin)
        monkeypatch.setattr(sys, "stdout", stdout)
        monkeypatch.setattr(sys, "stderr", stderr)
        code = main(["lint", "--no-cache", *argv])
        stdout.flush()
        return code, stdout.buffer.getvalue(), stderr.getvalue()

    return run


def test_a_bom_is_not_a_syntax_error(run_stdin):
    code, out, err = run_stdin(["--stdin-filename", "a.py"], b"\xef\xbb\xbf" + SYNC)
    assert code == 1 and b"a.py:2:1: PG101" in out and b"PG901" not in out, (out, err)


def test_a_latin1_file_with_its_coding_cookie(run_stdin):
    data = b"# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n" + AMP
    code, out, err = run_stdin(["--stdin-filename", "a.py"], data)
    assert code == 1 and b"PG104" in out and "internal error" not in err, (out, err)
    code, out, err = run_stdin(["--stdin-filename", "a.py", "--fix"], data)
    assert out == data.replace(b"torch.cuda.amp.autocast()", b'torch.amp.autocast("cuda")'), err


def test_undecodable_input_is_a_diagnostic(run_stdin):
    code, out, err = run_stdin(["--stdin-filename", "a.py"], b"x = '\xff'\n")
    assert code == 1 and b"PG903" in out and "internal error" not in err


def test_dash_reads_standard_input(run_stdin):
    code, out, _ = run_stdin(["-"], SYNC)
    assert code == 1 and out.startswith(b"-:2:1: PG101")
    code, out, _ = run_stdin(["--stdin-filename", "pkg/m.py", "-"], SYNC)
    assert out.startswith(b"pkg/m.py:2:1: PG101")


def test_report_file(run_stdin, tmp_path):
    code, out, _ = run_stdin(
        ["--stdin-filename", "a.py", "--output-format", "json", "-o", "r.json"], SYNC
    )
    assert code == 1 and out == b""
    assert [f["code"] for f in json.loads((tmp_path / "r.json").read_text())] == ["PG101"]


def test_diff(run_stdin):
    code, out, _ = run_stdin(["--stdin-filename", "a.py", "--diff"], AMP)
    assert code == 1
    assert b'-ctx = torch.cuda.amp.autocast()\n+ctx = torch.amp.autocast("cuda")' in out


def test_add_noqa_prints_the_annotated_source(run_stdin):
    code, out, err = run_stdin(["--stdin-filename", "a.py", "--add-noqa"], SYNC)
    assert code == 0 and out == b"import torch\ntorch.cuda.synchronize()  # noqa: PG101\n", err


def test_statistics(run_stdin):
    code, out, _ = run_stdin(
        ["--stdin-filename", "a.py", "--statistics", "--output-format", "json"], SYNC
    )
    assert [row["code"] for row in json.loads(out)] == ["PG101"]


def test_fix_keeps_crlf_and_bom(run_stdin):
    data = b"\xef\xbb\xbf" + AMP.replace(b"\n", b"\r\n")
    _, out, _ = run_stdin(["--stdin-filename", "a.py", "--fix"], data)
    assert out == data.replace(b"torch.cuda.amp.autocast()", b'torch.amp.autocast("cuda")')
