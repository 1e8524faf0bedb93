from __future__ import annotations

from portagpu.lint.model import Finding
from portagpu.lint.suppression import add_noqa, apply_suppressions, find_directives


def _f(line: int, code: str = "PG101", col: int = 1) -> Finding:
    return Finding("a.py", line, col, line, col + 1, code, "m")


def test_directive_forms():
    text = (
        "a()  # noqa\n"
        "b()  # noqa: PG101\n"
        "c()  # NOQA:PG101,PG102\n"
        "d()  # portagpu: ignore[PG501]\n"
        "e()  # portagpu: ignore\n"
        "f()  # a comment\n"
    )
    d = find_directives(text)
    assert d[1] is None and d[2] == {"PG101"} and d[3] == {"PG101", "PG102"}
    assert d[4] == {"PG501"} and d[5] is None and 6 not in d


def test_suppression_by_code():
    text = "a()  # noqa: PG102\nb()  # noqa\nc()  # portagpu: ignore[PG101]\nd()\n"
    findings = [_f(1), _f(2), _f(3), _f(4), _f(3, "PG102")]
    kept = apply_suppressions(text, findings, "python")
    assert [(f.line, f.code) for f in kept] == [(1, "PG101"), (4, "PG101"), (3, "PG102")]


def test_cuda_comments():
    text = "x = __shfl_sync(0xffffffff, v, 0); // noqa: PG501\ny(); /* portagpu: ignore[PG503] */\nz();\n"
    kept = apply_suppressions(text, [_f(1, "PG501"), _f(2, "PG503"), _f(3, "PG501")], "cuda")
    assert [f.line for f in kept] == [3]


def test_meta_diagnostics_cannot_be_silenced():
    assert apply_suppressions("print 'x'  # noqa\n", [_f(1, "PG901")], "python") == [_f(1, "PG901")]


def test_finding_inside_a_multiline_string_is_silenced_where_the_string_ends():
    text = 'src = r"""\n__global__ void k() {\n  __shfl_down_sync(0xffffffff, v, 1);\n}\n"""  # noqa: PG501\n'
    assert apply_suppressions(text, [_f(3, "PG501")], "python") == []
    assert apply_suppressions(text, [_f(3, "PG502")], "python") == [_f(3, "PG502")]


def test_add_noqa_is_idempotent_and_keeps_strings_and_line_endings():
    text = (
        "import torch\r\n"
        "torch.cuda.synchronize()\r\n"
        "x = 1  # noqa: PG999\r\n"
        'src = """\r\n__shfl_sync(0xffffffff, v, 0);\r\n"""\r\n'
        "y = 2  # noqa\r\n"
    )
    findings = [_f(2), _f(3), _f(5, "PG501"), _f(5, "PG503"), _f(7)]
    once = add_noqa(text, findings, "python")
    assert once.splitlines() == [
        "import torch",
        "torch.cuda.synchronize()  # noqa: PG101",
        "x = 1  # noqa: PG101, PG999",
        'src = """',
        "__shfl_sync(0xffffffff, v, 0);",
        '"""  # noqa: PG501, PG503',
        "y = 2  # noqa",
    ]
    assert once.count("\r\n") == text.count("\r\n")
    assert apply_suppressions(once, findings, "python") == []
    assert add_noqa(once, findings, "python") == once


def test_add_noqa_in_cuda_keeps_macro_continuations():
    text = "#define SHFL(v) \\\n  __shfl_sync(0xffffffff, v, 0)\nint a = f();\n"
    out = add_noqa(text, [_f(1, "PG501"), _f(3, "PG508")], "cuda")
    assert out.splitlines()[0] == "#define SHFL(v) /* noqa: PG501 */ \\"
    assert out.splitlines()[2] == "int a = f();  // noqa: PG508"
    assert apply_suppressions(out, [_f(1, "PG501"), _f(3, "PG508")], "cuda") == []


def test_add_noqa_property_on_odd_layouts():
    """For findings on any line of code with multi-line strings, f-strings,
    brackets and backslash continuations: the comments keep the code
    parsing (and strings unchanged), silence every finding, and a second
    pass adds nothing."""
    import ast

    from hypothesis import given, settings
    from hypothesis import strategies as st

    pieces = [
        "x = 1\n",
        'src = """\nline a\nline b\n"""\n',
        "y = (1 +\n     2)\n",
        "z = 1 + \\\n    2\n",
        'f = f"""{x}\n{y}"""\n',
        "call(a,\n     b)  # existing comment\n",
        "s = 'a' \\\n    'b'\n",
        "def g():\n    return '''\n    doc\n    '''\n",
    ]

    @settings(max_examples=80, deadline=None)
    @given(st.lists(st.sampled_from(pieces), min_size=1, max_size=6), st.data())
    def check(parts, data):
        text = "".join(parts)
        lines = text.count("\n")
        chosen = data.draw(st.lists(st.integers(1, lines), min_size=1, max_size=5))
        findings = [_f(line, code) for line in chosen for code in ("PG101",)]
        once = add_noqa(text, findings, "python")
        before = [n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant)]
        after = [n.value for n in ast.walk(ast.parse(once)) if isinstance(n, ast.Constant)]
        assert before == after, "a comment went into a string"
        assert apply_suppressions(once, findings, "python") == []
        assert add_noqa(once, findings, "python") == once

    check()
