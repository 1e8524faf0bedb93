from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from portagpu.lint import dispatch, runner
from portagpu.lint.engine import lint_paths, lint_text
from portagpu.lint.model import LintSettings


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_lint_text_dispatches_and_reports_parse_failure(toy):
    rules = toy().rules()
    found = lint_text("x = 1\ncuda_sync()\n", path="a.py", language="python", rules=rules, settings=LintSettings())
    assert [(f.code, f.line, f.col) for f in found] == [("TX101", 2, 1)]
    broken = lint_text("print 'py2'\ncuda_sync()\n", path="b.py", language="python", rules=rules, settings=LintSettings())
    # PG901, and what is still visible once the offending line is set aside
    assert [(f.code, f.line) for f in broken] == [("PG901", 1), ("TX101", 2)]
    assert broken[0].line == 1 and "b.py" == broken[0].path


def test_checker_crash_is_one_pg907_and_the_run_goes_on(toy, tmp_path):
    _write(tmp_path, "boom.py", "explode_here = 1\n")
    _write(tmp_path, "ok.py", "cuda_sync()\n")
    result = lint_paths([tmp_path], toy())
    codes = sorted((Path(f.path).name, f.code) for f in result.findings)
    assert codes == [("boom.py", "PG907"), ("ok.py", "TX101")]
    assert "toy checker exploded" in result.findings[0].message


def test_prescan_skips_files_without_tokens(toy, tmp_path):
    _write(tmp_path, "plain.py", "import os\nprint(os.getcwd())\n")
    _write(tmp_path, "gpu.py", "cuda_sync()\n")
    result = lint_paths([tmp_path], toy(cache=False))
    assert [Path(p).name for p in toy.calls] == ["gpu.py"]
    assert result.prescan_skipped == 1 and result.parsed == 1 and result.files == 2


def test_targets_select_rules(toy, tmp_path):
    _write(tmp_path, "a.py", "cuda_sync()\nn = warp32\n")
    on_rocm = lint_paths([tmp_path], toy(targets=("rocm",), cache=False))
    on_mps = lint_paths([tmp_path], toy(targets=("mps",), cache=False))
    assert {f.code for f in on_rocm.findings} == {"TX102"}
    assert {f.code for f in on_mps.findings} == {"TX101"}


def test_pool_gives_the_same_findings_as_one_process(toy, tmp_path, monkeypatch):
    for i in range(40):
        _write(tmp_path, f"pkg/m{i:02d}.py", "x = 1\n" * i + "cuda_sync()\nn = warp32\n")
    _write(tmp_path, "pkg/broken.py", "def f(:\n  cuda_sync()\n")
    monkeypatch.setattr(runner, "POOL_MIN_FILES", 2)
    serial = lint_paths([tmp_path], toy(jobs=1, cache=False))
    pooled = lint_paths([tmp_path], toy(jobs=2, cache=False))
    assert serial.findings == pooled.findings
    assert len(serial.findings) == 81 and serial.parsed == pooled.parsed == 41


def test_cache_answers_unchanged_files_and_notices_changes(toy, tmp_path):
    a = _write(tmp_path, "a.py", "cuda_sync()\n")
    _write(tmp_path, "b.py", "n = warp32\n")
    first = lint_paths([tmp_path], toy())
    assert first.cached == 0 and first.parsed == 2
    toy.calls.clear()
    second = lint_paths([tmp_path], toy())
    assert second.cached == 2 and second.parsed == 0 and toy.calls == []
    assert second.findings == first.findings
    a.write_text("x = 0\ncuda_sync()\n")
    third = lint_paths([tmp_path], toy())
    assert third.cached == 1 and third.parsed == 1
    assert [(Path(f.path).name, f.line) for f in third.findings if f.code == "TX101"] == [("a.py", 2)]
    # a different rule selection must not reuse these entries
    fourth = lint_paths([tmp_path], toy(select=("TX101",)))
    assert fourth.cached == 0 and {f.code for f in fourth.findings} == {"TX101"}


def test_no_cache_writes_nothing(toy, tmp_path):
    _write(tmp_path, "a.py", "cuda_sync()\n")
    lint_paths([tmp_path], toy(cache=False))
    assert not (tmp_path / ".portagpu_cache").exists()


def test_per_file_ignores(toy, tmp_path):
    _write(tmp_path, "tests/test_a.py", "cuda_sync()\nn = warp32\n")
    _write(tmp_path, "src/a.py", "cuda_sync()\n")
    result = lint_paths([tmp_path], toy(per_file_ignores=(("tests/*", ("TX101",)),), cache=False))
    assert sorted((f.path, f.code) for f in result.findings) == [
        ("src/a.py", "TX101"),
        ("tests/test_a.py", "TX102"),
    ]


def test_noqa_suppresses_in_a_run(toy, tmp_path):
    _write(tmp_path, "a.py", "cuda_sync()  # noqa: TX101\ncuda_sync()  # noqa: TX102\ncuda_sync()  # portagpu: ignore[TX101]\n")
    result = lint_paths([tmp_path], toy(cache=False))
    assert [f.line for f in result.findings] == [2]


def test_missing_checkers_are_reported_not_hidden(toy, tmp_path, monkeypatch):
    monkeypatch.setattr(dispatch, "_checker", lambda language: None)
    _write(tmp_path, "a.py", "cuda_sync()\n")
    result = lint_paths([tmp_path], toy(cache=False))
    assert "python" in result.missing_checkers


def test_unchanged_old_files_are_not_even_read(toy, tmp_path, monkeypatch):
    import os

    a = _write(tmp_path, "a.py", "cuda_sync()\n")
    os.utime(a, (1_600_000_000, 1_600_000_000))  # older than the racy window
    first = lint_paths([tmp_path], toy())
    opened: list[str] = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    second = lint_paths([tmp_path], toy())
    assert second.findings == first.findings and second.cached == 1
    assert not any(p.endswith("a.py") for p in opened)
    a.write_text("x = 1\ncuda_sync()\n")  # new mtime and size: read again
    third = lint_paths([tmp_path], toy())
    assert [f.line for f in third.findings] == [2]


def test_prescan_counts_cuda_tokens_in_python_only_next_to_a_kernel_call():
    from portagpu.lint.engine import PreScan
    from portagpu.lint.model import Rule

    cuda = Rule("PG599", "n", "f", "cuda", "error", ("rocm",), "m", "w", "r", "none", "c", tokens=("32",))
    py = Rule("PG199", "n", "f", "python", "warning", ("mps",), "m", "w", "r", "none", "c", tokens=("cuda",))
    scan = PreScan([cuda, py], "python")
    assert not scan.wants("x = torch.float32\n")  # `32` alone: no kernel source here
    assert scan.wants("k = cupy.RawKernel('... 32 ...', 'k')\n")
    assert not scan.wants("k = cupy.RawKernel(src, 'k')\n")  # no CUDA token at all
    assert scan.wants("x.cuda()\n")
    assert PreScan([cuda], "cuda").wants("int lanes = 32;")


def test_a_dying_worker_costs_one_pg907_per_file_not_the_run(toy, tmp_path, monkeypatch):
    import os

    for i in range(12):
        _write(tmp_path, f"m{i:02d}.py", "cuda_sync()\n" + ("explode_worker = 1\n" if i == 3 else ""))

    real_check = dispatch._checker("python")

    def dying(path, text, rules, settings):
        if "explode_worker" in text:
            os._exit(3)  # as if killed by the OOM killer
        return real_check(path, text, rules, settings)

    monkeypatch.setattr(dispatch, "_checker", lambda language: dying if language == "python" else None)
    monkeypatch.setattr(runner, "POOL_MIN_FILES", 2)
    monkeypatch.setattr(runner, "CHUNK_FILES", 1)
    result = lint_paths([tmp_path], toy(jobs=2, cache=False))
    codes = {Path(f.path).name: f.code for f in result.findings}
    assert codes["m03.py"] == "PG907" and "worker process failed" in next(
        f.message for f in result.findings if f.path.endswith("m03.py")
    )
    # the others were retried on a fresh pool: their own findings, not PG907
    assert all(code == "TX101" for name, code in codes.items() if name != "m03.py")
    assert len(codes) == 12


def test_linting_one_file_keeps_the_cache_of_the_others(toy, tmp_path):
    import os

    a = _write(tmp_path, "a.py", "cuda_sync()\n")
    b = _write(tmp_path, "b.py", "n = warp32\n")
    for path in (a, b):
        os.utime(path, (1_600_000_000, 1_600_000_000))
    lint_paths([tmp_path], toy())
    lint_paths([a], toy())  # as pre-commit would
    again = lint_paths([tmp_path], toy())
    assert again.cached == 2 and again.parsed == 0
    b.unlink()
    lint_paths([a], toy())  # b is gone: its entry is dropped, not kept forever
    import json

    from portagpu.lint.cache import decode

    caches = [p for p in (tmp_path / ".portagpu_cache").rglob("*.json") if not p.name.startswith("rules-")]
    entries, stats, _ = decode(json.loads(caches[-1].read_bytes()))
    assert len(caches) == 1 and len(entries) == 1 and all(p.endswith("a.py") for p in stats)


def test_a_rule_that_requires_a_word_is_inert_without_it():
    """`requires`: the rule's tokens want a file, narrow it and are walked
    only where one of its required words is also in the text."""
    from portagpu.lint.engine import PreScan
    from portagpu.lint.model import Rule

    needs = Rule("PG199", "n", "f", "python", "warning", ("mps",), "m", "w", "r", "none", "c",
                 tokens=("gpu",), requires=("binder",))
    other = Rule("PG198", "n", "f", "python", "warning", ("mps",), "m", "w", "r", "none", "c", tokens=("cuda",))
    scan = PreScan([needs, other], "python")
    assert not scan.wants("gpu = 1\n")  # its token alone: the rule cannot fire here
    assert scan.wants("binder()\ngpu = 1\n") and scan.wants("x.cuda()\n")
    assert not scan.wants("binder()\n")
    # the words a file is narrowed by: the inert rule's tokens only next to its word
    narrowing = dispatch._narrow_tokens(dispatch.narrowing_key((needs, other)))
    assert "gpu" not in dispatch._tokens_for("x.cuda()\ngpu = 1\n", narrowing)
    assert "gpu" in dispatch._tokens_for("binder()\ngpu = 1\n", narrowing)


def test_requires_is_read_from_the_catalogue_and_its_json_copy(tmp_path):
    from portagpu.lint.catalogue import load_catalogue
    from portagpu.lint.config import _rules_from_data, _rules_to_data

    rules = load_catalogue()
    pg806 = next(r for r in rules if r.id == "PG806")
    assert pg806.requires == ("nccl", "NCCL", "set_device")
    assert _rules_from_data(_rules_to_data(rules)) == rules


def _rule(rule_id: str, tokens: tuple[str, ...], **fields):
    from portagpu.lint.model import Rule

    return Rule(rule_id, "n", "f", "python", "warning", ("mps",), "m", "w", "r", "none", "c", tokens=tokens, **fields)


def test_word_tokens_want_a_file_only_as_words_outside_comments():
    """`token_match: word`: `is_cuda`, `cudagraphs` or a comment about cuda
    parse nothing for such a rule; a substring rule's same token still does."""
    from portagpu.lint.engine import PreScan

    words = PreScan([_rule("PG198", ("cuda",), token_match="word")], "python")
    for text in ("x.is_cuda\n", "torch.cudagraphs()\n", "# runs on cuda\n", "y = 1  # cuda\n"):
        assert not words.wants(text), text
    for text in ("torch.cuda.synchronize()\n", "x.to('cuda:0')\n", "dev = f'cuda:{i}'\n", "x = '#'; x.cuda()\n"):
        assert words.wants(text), text
    mixed = PreScan([_rule("PG198", ("cuda",), token_match="word"), _rule("PG197", ("is_cuda",))], "python")
    assert mixed.wants("x.is_cuda\n") and not mixed.wants("torch.cudagraphs()\n")
    # a CUDA source's `#` starts a directive, not a comment: there every token is a substring
    assert PreScan([_rule("PG198", ("cuda",), token_match="word")], "cuda").wants("#include <cuda_runtime.h>\n")


def test_word_tokens_in_docstrings_want_no_file():
    """A docstring's words are prose: "moves the batch to cuda" there parses
    nothing for a word rule. A triple-quoted f-string's fields are code, and
    code after a closing quote on the same line is code."""
    from portagpu.lint.engine import PreScan

    q = '"' * 3
    words = PreScan([_rule("PG198", ("cuda",), token_match="word")], "python")
    for text in (
        f"def f():\n    {q}Moves the batch to cuda.{q}\n    return 1\n",
        f"HELP = {q}\nRun with --device cuda\n{q}\n",
        f"x = r{q}torch.cuda.synchronize(){q}\n",
    ):
        assert not words.wants(text), text
    for text in (
        f"msg = f{q}{{torch.cuda.current_device()}}{q}\n",
        f"x = {q}doc{q} if ok else y.cuda()\n",
        f"def f():\n    {q}Doc.{q}\n    torch.cuda.synchronize()\n",
        "s = s.replace('" + q + "', ''); torch.cuda.synchronize()\n",
    ):
        assert words.wants(text), text


def test_only_files_keeps_a_rule_to_the_sources_it_names(tmp_path):
    """PG308 reads setup.py (and dependency lists) only: its broad tokens
    (`cuda`, `nvidia`) select no other Python file, and it reports nowhere else."""
    from portagpu.lint.config import LintConfig

    pins = "from setuptools import setup\nsetup(name='x', install_requires=['cupy-cuda12x'])\n"
    _write(tmp_path, "setup.py", pins)
    _write(tmp_path, "pkg/build.py", pins)
    _write(tmp_path, "requirements.txt", "cupy-cuda12x\n")
    result = lint_paths([tmp_path], LintConfig(select=("PG308",), cache=False))
    assert sorted((Path(f.path).name, f.code) for f in result.findings) == [
        ("requirements.txt", "PG308"), ("setup.py", "PG308")]
    assert result.prescan_skipped == 1  # pkg/build.py, never parsed


def test_token_match_and_only_files_are_checked_in_the_catalogue():
    import pytest

    from portagpu.errors import ConfigError
    from portagpu.lint.catalogue import parse_rule

    base = {"id": "PG199", "name": "n", "message": "m", "why": "w", "replacement": "r", "checker": "c"}
    rule = parse_rule({**base, "token_match": "word", "only_files": ["setup.py"]}, family="f", language="python", source="s")
    assert rule.token_match == "word" and rule.only_files == ("setup.py",)
    with pytest.raises(ConfigError, match="token_match must be one of"):
        parse_rule({**base, "token_match": "regex"}, family="f", language="python", source="s")
    with pytest.raises(ConfigError, match="for Python rules"):
        parse_rule({**base, "token_match": "word"}, family="f", language="cuda", source="s")


def test_a_type_stub_is_counted_but_never_checked(toy, tmp_path):
    """A .pyi declares types and runs nothing: no vendor idiom in it can break."""
    (tmp_path / "api.pyi").write_text("def sync() -> None: ...\nx = cuda_sync()\n")
    (tmp_path / "api.py").write_text("x = cuda_sync()\n")
    result = lint_paths([tmp_path], toy(cache=False))
    assert [Path(f.path).name for f in result.findings] == ["api.py"]
    assert result.files == 2 and result.prescan_skipped == 1


def test_an_editor_buffer_named_as_a_stub_is_not_checked(toy):
    from portagpu.lint.engine import lint_one

    assert lint_one("x = cuda_sync()\n", "api.pyi", toy(cache=False)).findings == []
    assert lint_one("x = cuda_sync()\n", "api.py", toy(cache=False)).findings


@given(st.lists(st.sampled_from(["nvidia", "-smi", "gl.", "import ", "RawKernel", "Kernel", "x", " ", "\n"]), max_size=12))
@settings(max_examples=300, deadline=None)
def test_a_gated_token_search_finds_what_a_plain_search_finds(pieces):
    """AnyToken puts tokens sharing a piece behind it (`nvidia` for
    `nvidia-smi`, `gl.nvidia`, `import nvidia`): the answer is any(token in
    text), whatever text, and after its hits reordered the groups."""
    from portagpu.lint.prescan import AnyToken

    tokens = ("nvidia-smi", "gl.nvidia", "import nvidia", "RawKernel", "ReductionKernel", "ElementwiseKernel", "nvml")
    search = AnyToken(tokens)
    assert {gate for gate, members in search.groups if len(members) > 1} == {"nvidia", "Kernel"}
    texts = ["".join(pieces[i::3]) for i in range(3)] * 2  # one search for all: its order moves
    for text in texts:
        assert search(text) == any(t in text for t in tokens)
