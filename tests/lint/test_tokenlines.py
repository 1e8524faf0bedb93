"""The shared token index (portagpu/lint/tokenlines.py): Python's line model,
one search per token, and a narrowed text's hits without a new search."""

from hypothesis import given, settings
from hypothesis import strategies as st

from portagpu.lines import split_lines
from portagpu.lint import tokenlines
from portagpu.lint.narrow import narrow
from portagpu.lint.tokenlines import TokenLines


def test_lines_end_only_at_cr_lf_crlf():
    text = "a\x0cb\r\ncuda\rx\x85cuda\n\u2028cuda"
    assert split_lines(text, keepends=True) == ["a\x0cb\r\n", "cuda\r", "x\x85cuda\n", "\u2028cuda"]
    assert TokenLines(text).of("cuda") == [2, 3, 4]
    assert TokenLines("").of("cuda") == [] and not TokenLines("x").has("")


def test_each_token_is_searched_once():
    index = TokenLines("cuda cuda\nno\ncuda\n")
    assert index.of("cuda") == [1, 3]
    index.text = "changed"  # a second search would see this
    assert index.of("cuda") == [1, 3] and index.has("cuda")


def test_a_narrowed_text_keeps_the_hits_outside_blanked_blocks():
    body = "def gone():\n    x = subprocess_run()\n    return x\n\n" * 8
    klass = "class K:\n    def a(self):\n        return 1  # as\n\n    def b(self):\n        return torch.cuda\n"
    text = (
        "import torch\n"
        + body
        + klass
        + "def kept():\n    return torch.cuda.is_available()  # subprocess\n"
    )
    narrowed = narrow(text, ("cuda",))
    assert narrowed is not None and narrowed.count("\n") == text.count("\n")
    assert "class K:\n    pass\n" in narrowed  # K.a blanked to `pass`: a token there is searched
    index = tokenlines.for_text(narrowed)
    assert index.text is narrowed
    for token in ("cuda", "subprocess", "pass", "as", "return", "gone"):
        assert index.of(token) == TokenLines(narrowed).of(token), token


def test_a_miss_among_the_distinct_words_is_a_miss_in_the_text():
    text = "x = torch.cuda.is_available()\n\tif  a:\x0cb = 'mps'\ny = x  // 32\n" * 3
    index = TokenLines(text)
    for token in ("cuda", "torch.cuda.is", "'mps'", "// 32", "a:\x0cb", "x = torch", "nvml", "32\ny", "y = x  //"):
        expected = [n for n, line in enumerate(split_lines(text, keepends=True), 1) if token in line]
        if "\n" in token:  # spans lines: found on the line it starts
            expected = sorted({text.count("\n", 0, at) + 1 for at in _offsets(text, token)})
        assert index.of(token) == expected, token


def _offsets(text, token):
    at = text.find(token)
    while at >= 0:
        yield at
        at = text.find(token, at + 1)


def test_mentions_reads_the_last_index_and_searches_any_other_text():
    text = "a = 1\nk = cupy.RawKernel(src)\n"
    index = tokenlines.for_text(text)
    assert tokenlines.mentions(text, ("RawKernel", "SourceModule"))
    index._found["RawKernel"] = []  # the index answers, not a new search
    assert not tokenlines.mentions(text, ("RawKernel",))
    assert tokenlines.mentions("other RawKernel", ("RawKernel",))
    assert not tokenlines.mentions("nothing here", ("RawKernel",))


def test_candidate_lines_find_whole_word_aliases_as_a_full_regex_scan_would():
    import re

    from portagpu.lint.python.source import Source

    text = "import pynvml as nv\nenv = 1\nnv.nvmlInit()\nx = nvx\n# nv here\ny = (nv\n)\nnv"
    names = ("nv", "nvx")
    pattern = re.compile(r"\b(?:nv|nvx)\b")
    expected = sorted({text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text)} | {1})
    assert Source(text).candidate_lines(["pynvml"], names) == expected == [1, 3, 4, 5, 6, 8]


def test_a_word_stands_alone_outside_comments():
    from portagpu.lint.tokenlines import has_word

    for text in ("torch.cuda.synchronize()", 'x.to("cuda:0")', "f'cuda:{i}'", "cupy-cuda12x", "cuda", "(cuda)",
                 "x = 1  # ok\ny.cuda()", "s = '#'; s.cuda()", "is_cuda or torch.cuda"):
        assert has_word(text, "cuda"), text
    for text in ("x.is_cuda", "cudagraphs()", "torch._C._cuda_init", "use_cuda_graph", "# sync cuda first",
                 "    # torch.cuda.synchronize()", "x = 1  # on cuda", "", "CUDA", "pycuda"):
        assert not has_word(text, "cuda"), text
    assert has_word("torch==2.1+cu121", "cu1") and not has_word("accu1 = 0", "cu1")
    # a comment ends at any of Python's line ends, a lone \r included
    assert has_word("# note\rtorch.cuda.synchronize()", "cuda") and has_word("# a\r\nx.cuda()", "cuda")


def test_word_lines_find_names_as_whole_words_only():
    from portagpu.lint.tokenlines import TokenLines

    text = "dense = 1\nbsr_dense_addmm(x)\ny = dense+1\nx_dense\nédense\ndense2\n"
    assert TokenLines(text).word_lines(["dense"]) == {1, 3}


_PIECES = ["cuda", " ", "\n", "\r\n", "\r", "x", "_", "#", "'", '"', '"""', "is_cuda", "cuda12", ".", "(", "\x85"]


@given(st.lists(st.sampled_from(_PIECES), max_size=30))
@settings(max_examples=400, deadline=None)
def test_code_word_lines_are_the_lines_of_word_offsets(pieces):
    """The line-by-line reading narrowing uses agrees with word_offsets, the
    pre-scan's reading, on every text: line breaks of each kind, comments,
    quotes, docstrings and longer names around the word."""
    import bisect

    from portagpu.lint.triple_quotes import PlainStrings

    text = "".join(pieces)
    index = TokenLines(text)
    inside = PlainStrings(text).inside
    expected = {bisect.bisect_right(index.starts, at) for at in tokenlines.word_offsets(text, "cuda", inside)}
    assert index.code_word_lines(["cuda"], inside) == expected
