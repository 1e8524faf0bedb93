"""Narrowing (portagpu/lint/narrow.py) blanks top-level blocks no rule can care
about; it must never change what the checkers find."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from portagpu.lint import dispatch
from portagpu.lint.engine import lint_paths
from portagpu.lint.narrow import bound_names, narrow

SOURCE = '''import torch
from torch.cuda import (synchronize as sync,
   Stream)
import torch.cuda as tc
DEV = "cuda"


def plain():
    """A docstring with code at column 0:
def fake():
    fake_call()
    """
    return 1


@decorator(
    arg=1,
)
def uses_alias():
    sync()


def uses_module_alias():
    tc.foo()


class Unrelated(
    Base,
):
    x = 1


def direct():
    torch.cuda.foo()


def last(): pass
'''


def test_narrow_keeps_line_numbers_and_relevant_blocks():
    out = narrow(SOURCE, ["cuda"])
    assert out is not None
    assert out.count("\n") == SOURCE.count("\n")
    kept = {i for i, line in enumerate(out.splitlines(), 1) if line.strip()}
    original = SOURCE.splitlines()
    for number in kept:  # every kept line is unchanged, in place
        assert out.splitlines()[number - 1] == original[number - 1]
    text = out
    assert "def plain" not in text and "class Unrelated" not in text and "def last" not in text
    assert "def uses_alias" in text and "@decorator(" in text and "arg=1," in text  # via `sync`
    assert "def uses_module_alias" in text  # via `tc`
    assert "def direct" in text and "DEV = " in text and "import torch.cuda as tc" in text


def test_bound_names():
    assert bound_names(SOURCE, ["cuda"]) == {"sync", "Stream", "tc", "DEV"}


def test_small_savings_are_not_worth_a_copy():
    relevant = "import torch\n" + "torch.cuda.x()\n" * 40
    assert narrow(relevant + "def f():\n    pass\n", ["cuda"]) is None
    assert narrow("x = 1\n", ["cuda"]) is None


def _tree(root: Path) -> list[int]:
    """Writes a.py; returns the lines the toy checker must flag."""
    text = (
        "from mod import cuda_sync as go\n\n"
        + "".join(f"def filler{i}():\n    return {i}\n\n" for i in range(30))
        + "def f():\n    go()\n    cuda_sync()\n\n"
        + 'def g():\n    """\ndef h():\n    cuda_sync()\n    """\n'
        + "class K:\n    def m(self):\n        cuda_sync()  # noqa: TX102\n"
    )
    (root / "a.py").write_text(text)
    return [i for i, line in enumerate(text.splitlines(), 1) if "cuda_sync()" in line]


def test_findings_are_the_same_with_and_without_narrowing(toy, tmp_path, monkeypatch):
    expected = _tree(tmp_path)
    narrowed = lint_paths([tmp_path], toy(cache=False))
    monkeypatch.setattr(dispatch, "NARROW", False)
    full = lint_paths([tmp_path], toy(cache=False))
    assert narrowed.findings == full.findings
    assert [f.line for f in full.findings] == expected and len(expected) == 3


def test_a_narrowed_text_that_does_not_parse_falls_back_to_the_whole_file(toy, tmp_path, monkeypatch):
    expected = _tree(tmp_path)
    monkeypatch.setattr("portagpu.lint.narrow.narrow", lambda text, tokens, words=(): "def broken(:\n")
    result = lint_paths([tmp_path], toy(cache=False))
    assert [f.line for f in result.findings] == expected


def test_methods_of_a_relevant_class_are_narrowed_and_the_class_stays_valid():
    import ast

    source = (
        "import torch\n"
        "class Backend(Base):\n"
        '    """doc"""\n'
        "    name = 'x'\n\n"
        "    @staticmethod\n"
        "    def helper(\n"
        "        y,\n"
        "    ):\n"
        "        return y\n\n"
        "    def sync(self):\n"
        "        torch.cuda.synchronize()\n\n"
        "    async def other(self):\n"
        "        return 2\n"
        "class Empty:\n"
        "    def only(self):\n"
        "        return torch.cuda\n"
    ) + "def filler():\n    pass\n" * 3
    out = narrow(source, ["cuda"])
    assert out is not None and out.count("\n") == source.count("\n")
    ast.parse(out)
    lines = out.splitlines()
    assert lines[5] == "    pass" and "def helper" not in out and "async def other" not in out
    assert lines[11:13] == ["    def sync(self):", "        torch.cuda.synchronize()"]
    assert "def only" in out and "name = 'x'" in out and '"""doc"""' in out


def test_a_multiline_assignment_binds_its_name():
    source = (
        "import triton\n"
        "CONFIGS = [\n"
        "    triton.Config({}, num_warps=32),\n"
        "]\n"
        "@triton.autotune(configs=CONFIGS, key=[])\n"
        "@triton.jit\n"
        "def kernel(x):\n"
        "    pass\n"
    ) + "def filler():\n    pass\n" * 5
    out = narrow(source, ["num_warps"])
    assert out is not None and "def kernel" in out and "@triton.autotune" in out and "def filler" not in out


def test_a_name_counts_where_it_stands_as_a_whole_identifier():
    """`dense` bound on a token line is not used by `bsr_dense_addmm` nor by
    `_dense_cache`; a block that spells `dense` itself is kept."""
    source = (
        "import torch\n"
        "dense = torch.ones(4, device='cuda')\n"
        "def uses():\n    return dense + 1\n"
        "def op_name():\n    return 'bsr_dense_addmm', _dense_cache\n"
    ) + "def filler():\n    pass\n" * 5
    out = narrow(source, ["cuda"])
    assert out is not None and "def uses" in out and "def op_name" not in out


def test_a_token_in_a_comment_keeps_no_block():
    source = (
        "import torch\n"
        "def documented():\n    # moved to cuda by the caller\n    return 1\n"
        "def real():\n    return torch.cuda.device_count()  # cuda\n"
    ) + "def filler():\n    pass\n" * 5
    out = narrow(source, ["cuda"])
    assert out is not None and "def documented" not in out and "def real" in out


def _table(name: str, rows: int, row: str = "    (1, 2, 3): (4, 8),\n") -> str:
    return f"{name} = {{\n    # legend: num_warps per shape, tuned on cuda\n" + row * rows + "}\n"


def test_a_long_data_table_without_tokens_is_blanked_and_the_rest_parses():
    import ast

    source = "import torch\n" + _table("TUNED", 30) + "def pick():\n    return TUNED.get((1, 2, 3), torch.cuda)\n"
    out = narrow(source, ["cuda", "num_warps"])
    assert out is not None and out.count("\n") == source.count("\n")
    ast.parse(out)
    assert "TUNED = {" not in out and "def pick" in out


def test_tables_that_may_matter_are_kept():
    """A table holding a token, a short one, and a string (a kernel source or
    template may be read through its name) stay whatever their length."""
    holding = _table("WARPS", 30, row="    (1, 2): dict(num_warps=32),\n")
    short = _table("SMALL", 5)
    source_text = "SRC = (\n" + "    'x = a + b;'\n" * 30 + ")\n"
    source = "import torch\n" + holding + short + source_text + "def f():\n    pass\n" * 20
    out = narrow(source, ["num_warps"])
    assert out is not None and "WARPS = {" in out and "SMALL = {" in out and "SRC = (" in out


def test_methods_of_nested_classes_and_classes_with_long_headers_are_narrowed():
    import ast

    source = (
        "import torch\n"
        "class Outer:\n"
        "    class Inner(\n        Base,\n        metaclass=Meta,\n    ):\n"
        "        def unrelated(self):\n            return 1\n"
        "        def sync(self):\n            torch.cuda.synchronize()\n"
    ) + "def filler():\n    pass\n" * 5
    out = narrow(source, ["cuda"])
    assert out is not None
    ast.parse(out)
    assert "def unrelated" not in out and "def sync" in out and "metaclass=Meta," in out


def test_triple_quotes_in_one_line_strings_and_comments_open_nothing():
    """`.replace('\"\"\"', ...)`, a `#` comment quoting one and an escaped
    quote before a closing triple quote open no string: the class after them
    is still code, so its irrelevant method is blanked and the text parses."""
    import ast

    quote = '"' * 3
    source = (
        "import torch\n"
        "class Writer:\n"
        f"    def escape(self, s):\n        return s.replace('{quote}', '')\n"
        "    def sync(self):\n        torch.cuda.synchronize()\n"
        f'    def header(self, name):  # {quote}\n        return f{quote}#include \\"{{name}}.h\\"{quote}\n'
        f"class Reader:\n    {quote}\n    Doc.\n    {quote}\n"
        "    def unrelated(self):\n        return 1\n"
        "    def device(self):\n        return torch.cuda.current_device()\n"
    ) + "def filler():\n    pass\n" * 5
    ast.parse(source)
    out = narrow(source, ["cuda"])
    assert out is not None
    ast.parse(out)
    assert "def unrelated" not in out and "def escape" not in out and "def header" not in out
    assert "def sync" in out and "def device" in out and "class Reader" in out


def test_catalogue_examples_agree_with_and_without_narrowing(monkeypatch):
    """Every rule's examples, narrowed as far as possible: same findings as a
    full parse. A rule that reaches outside the blocks it has tokens in
    fails here, by name."""
    import pytest

    from portagpu.lint import meta
    from portagpu.lint import narrow as narrow_module
    from portagpu.lint.catalogue import load_catalogue
    from portagpu.lint.engine import checker_available, lint_source
    from portagpu.lint.model import LintSettings

    if not checker_available("python"):
        pytest.skip("the Python checkers are not in the tree yet")
    monkeypatch.setattr(narrow_module, "MIN_SAVING", 0.0)
    for rule in load_catalogue():
        if meta.is_meta(rule) or rule.language != "python":
            continue
        settings = LintSettings(targets=rule.targets)
        for example in rule.invalid + rule.valid:
            if example.path and not example.path.endswith(".py"):
                continue  # not Python: nothing to narrow
            data = example.code.encode()
            runs = []
            for narrowing in (True, False):
                monkeypatch.setattr(dispatch, "NARROW", narrowing)
                runs.append(lint_source(data, path="example.py", language="python", rules=[rule], settings=settings))
            assert runs[0] == runs[1], f"{rule.id}: narrowing changed the findings of\n{example.code}"


# the fast scans narrowing uses, against the regexes they stand for: quotes,
# line breaks (all three), odd whitespace and closing brackets at column 0
_PIECES = ['"""', "'''", '"', "'", "\\", "\n", "\r\n", "\r", " ", "\t", "\x0c", "\u2028", "#", ")", "]", "}", "x", "def f():"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40))
@settings(max_examples=400, deadline=None)
def test_fast_scans_find_what_the_regexes_find(pieces):
    from portagpu.lint.narrow import _HEAD, _head_offsets

    text = "".join(pieces)
    assert _head_offsets(text) == [m.start() for m in _HEAD.finditer(text)]


def _literal(value: str, kind: str) -> str:
    """`value` as a Python string literal of one kind; a triple-quoted one
    escapes its quotes, so a value ending in a quote closes as `\\\"\"\"\"`."""
    if kind == "repr":
        return repr(value)
    quote = kind[0]
    body = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return f"{kind}{body}{kind}"


_VALUES = st.text(alphabet=list("a #\"'\\\n"), max_size=10)
_STATEMENT = st.one_of(
    st.builds(lambda v, k: f"x = {_literal(v, k)}", _VALUES, st.sampled_from(['"""', "'''", "repr"])),
    st.builds(lambda v, k, w: f"f({_literal(v, k)}, {_literal(w, 'repr')})", _VALUES, st.sampled_from(['"""', "'''"]), _VALUES),
    st.builds(lambda v: "# " + v.replace("\n", " "), _VALUES),
)


@given(st.lists(_STATEMENT, max_size=8))
@settings(max_examples=300, deadline=None)
def test_string_interiors_are_the_tokenizers(statements):
    """Lines inside multi-line strings, as Python's tokenizer reads them, for
    literals of every kind: one-line strings holding a triple quote, comments
    holding one, escaped quotes before a closing triple quote."""
    import io
    import tokenize

    from portagpu.lint import tokenlines
    from portagpu.lint.narrow import _string_interiors
    from portagpu.lint.triple_quotes import triple_quoted_spans

    text = "".join(s + "\n" for s in statements)
    expected: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING and token.end[0] > token.start[0]:
            expected.update(range(token.start[0] + 1, token.end[0] + 1))
    assert _string_interiors(triple_quoted_spans(text), tokenlines.TokenLines(text).starts) == expected


def test_facts_about_the_whole_module_see_the_blocks_narrowing_blanked():
    """PG107 stays quiet when the module handles MPS anywhere: a function
    naming `mps` and no token is blanked before the walk, and the module's
    text facts must still see it (they read the text before narrowing)."""
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_one

    choice = "import torch\n\ndef pick():\n    return 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    apple = "\n\ndef apple(x):\n    return x.to('mps')\n"
    filler = "".join(f"\n\ndef filler{i}(a):\n    return a + {i}\n" for i in range(10))
    config = LintConfig()
    assert narrow(choice + apple + filler, ["cuda"]) is not None  # `apple` is blanked
    assert [f.code for f in lint_one(choice + filler, "m.py", config).findings] == ["PG107"]
    assert lint_one(choice + apple + filler, "m.py", config).findings == []


def test_a_helper_importing_what_a_token_line_uses_is_kept():
    """`torch` imported only inside a helper (returned from it) and used on a
    token line elsewhere: the checkers read every import of the module, so
    the helper stays; a helper importing a name no token line uses goes, and
    so does one whose import a module-level import already makes."""
    source = (
        "import os\n"
        "def lazy_modules():\n    import torch\n    import numpy as np\n    return torch, np\n"
        "def other():\n    import os\n    return os.sep\n"
        "def run():\n    torch, np = lazy_modules()\n    torch.cuda.synchronize()\n    os.cpu_count()\n"
    ) + "def filler():\n    pass\n" * 12
    out = narrow(source, ["cuda"])
    assert out is not None and "def lazy_modules" in out and "import torch" in out
    assert "def other" not in out


def test_a_local_import_keeps_its_finding_with_narrowing(tmp_path):
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_one

    source = (
        "def lazy_torch():\n    import torch\n    return torch\n"
        "def run(fast):\n    torch = lazy_torch()\n    torch.cuda.synchronize()\n"
    ) + "def filler():\n    pass\n" * 12
    codes = [f.code for f in lint_one(source, "m.py", LintConfig()).findings]
    assert "PG101" in codes


_FILLER = "".join(f"\n\ndef filler{i}(a):\n    return a + {i}\n" for i in range(12))


def _same_findings_narrowed(source: str, monkeypatch) -> list[tuple[str, int]]:
    """The real catalogue's findings on `source`, which narrowing must not change."""
    from portagpu.lint.config import LintConfig
    from portagpu.lint.engine import lint_one

    narrowed = [(f.code, f.line) for f in lint_one(source, "m.py", LintConfig()).findings]
    monkeypatch.setattr(dispatch, "NARROW", False)
    full = [(f.code, f.line) for f in lint_one(source, "m.py", LintConfig()).findings]
    monkeypatch.setattr(dispatch, "NARROW", True)
    assert narrowed == full
    return narrowed


def test_a_word_only_in_a_longer_name_or_a_docstring_keeps_no_block(monkeypatch):
    """Rules whose tokens count only as whole words in code (`token_match:
    word`) keep no block for `is_cuda`, `cuda_graphs` or a docstring's "cuda":
    the pre-scan already reads the file that way; a plain token still keeps
    its block wherever it stands."""
    source = (
        "import torch\n\ndef moves(x):\n    return x.cuda()\n"
        '\n\ndef prose(x):\n    """Runs on cuda when asked."""\n    return x.is_cuda\n'
        "\n\ndef graphs(cuda_graphs):\n    return len(cuda_graphs)\n"
    ) + _FILLER
    out = narrow(source, [], ["cuda"])
    assert out is not None and "def moves" in out
    assert "def prose" not in out and "def graphs" not in out
    substring = narrow(source, ["cuda"])
    assert substring is not None and "def prose" in substring and "def graphs" in substring
    assert _same_findings_narrowed(source, monkeypatch) == [("PG102", 4)]


def test_a_name_a_function_binds_for_itself_keeps_no_other_block(monkeypatch):
    """`dev = "cuda"` inside a function binds that function's local: another
    function using its own `dev` is not kept for it. A module-level binding,
    an attribute (`self.dev = ...`) and a function that declares the name
    `global` still reach the other blocks."""
    local = 'def pick():\n    dev = "cuda"\n    return dev\n\n\ndef other(dev):\n    return dev.index\n'
    out = narrow(local + _FILLER, ["cuda"])
    assert out is not None and "def pick" in out and "def other" not in out
    module = 'dev = "cuda"\n\n\ndef other(x):\n    return x.to(dev)\n'
    assert "def other" in narrow(module + _FILLER, ["cuda"])
    escaping = 'def pick():\n    global dev\n    dev = "cuda"\n\n\ndef other(x):\n    return x.to(dev)\n'
    assert "def other" in narrow(escaping + _FILLER, ["cuda"])
    attribute = 'def setup(cfg):\n    cfg.dev = "cuda"\n\n\ndef other(cfg, x):\n    return x.to(cfg.dev)\n'
    assert "def other" in narrow(attribute + _FILLER, ["cuda"])
    for source in (local, module, escaping, attribute):
        _same_findings_narrowed("import torch\n" + source + _FILLER, monkeypatch)
