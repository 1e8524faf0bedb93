"""Issue 13 item 20: SARIF artifact URIs are percent-encoded (a space, `%`,
`#` or `?` in a path), and every rule's shortDescription is real text, not
its message template with the braces dropped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from portagpu.lint.catalogue import load_catalogue
from portagpu.lint.model import Finding
from portagpu.lint.report import format_sarif

SCHEMA = Path(__file__).parents[1] / "lint" / "sarif-schema-2.1.0.json"


@pytest.mark.parametrize(
    "path", ["dir with space/a.py", "50%/b.py", "c#1.py", "what?.py", "é/ü.py", "plain/d.py"]
)
def test_relative_uris_are_percent_encoded(path):
    finding = Finding(path, 1, 1, 1, 2, "PG101", "msg")
    log = json.loads(format_sarif([finding], load_catalogue()))
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    uri = location["uri"]
    assert not re.search(r"[ %#?](?![0-9A-F]{2})", uri.replace("%25", "")), uri
    assert (
        uri.isascii() and unquote(uri) == path and urlparse(uri).path == uri
    )  # nothing read as a query or fragment
    assert location["uriBaseId"] == "%SRCROOT%"


def test_absolute_uris_are_file_uris(tmp_path):
    path = str(tmp_path / "a b%.py")
    finding = Finding(path, 1, 1, 1, 2, "PG101", "msg")
    log = json.loads(format_sarif([finding], load_catalogue()))
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"][
        "uri"
    ]
    assert uri.startswith("file:///") and unquote(urlparse(uri).path) == path


def test_short_descriptions_are_filled():
    rules = load_catalogue()
    log = json.loads(format_sarif([], rules))
    for entry in log["runs"][0]["tool"]["driver"]["rules"]:
        text = entry["shortDescription"]["text"]
        rule = next(r for r in rules if r.id == entry["id"])
        names = re.findall(r"\{(\w+)\}", rule.message)
        assert text and not re.search(r"\{\w+\}", text) and len(text) <= 200, (rule.id, text)
        for name in names:  # the placeholder's bare name is not left behind
            assert f"`{name}`" not in text and f"`{name}()`" not in text, (rule.id, text)


def test_sarif_with_odd_paths_validates_against_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    findings = [Finding(p, 1, 1, 1, 2, "PG101", "msg") for p in ("a b.py", "50%.py", "x#y.py")]
    log = json.loads(format_sarif(findings, load_catalogue()))
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
