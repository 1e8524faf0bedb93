"""parse_preferring_structure: a second parse with the conditionals blanked,
made only where a broken construct meets a conditional."""

from __future__ import annotations

import pytest

pytest.importorskip("tree_sitter")

from portagpu.cuda import unit  # noqa: E402

SPLIT_HEAD = (
    "#if USE_HALF\n__global__ void k(half* x) {\n#else\n__global__ void k(float* x) {\n#endif\n"
    "  x[threadIdx.x] = 0;\n}\n"
)
ERROR_FAR_FROM_CONDITIONALS = (
    "#ifdef FAST\n#define N 4\n#endif\n\n__global__ void k(float* x) {\n  x[threadIdx.x] = 0;\n}\n\nint y = 3 @ 4;\n"
)


def _parses(monkeypatch, text):
    calls = []
    real = unit.parse

    def counting(source):
        calls.append(source)
        return real(source)

    monkeypatch.setattr(unit, "parse", counting)
    return unit.parse_preferring_structure(text), calls


def test_a_conditional_that_splits_a_function_head_gets_the_blanked_parse(monkeypatch):
    tree, calls = _parses(monkeypatch, SPLIT_HEAD)
    assert len(calls) == 2
    assert unit.loose_error_bytes(tree.root_node)[0] == 0  # the cleaner, blanked tree


def test_an_error_that_touches_no_conditional_is_parsed_once(monkeypatch):
    tree, calls = _parses(monkeypatch, ERROR_FAR_FROM_CONDITIONALS)
    assert len(calls) == 1
    assert unit.loose_error_bytes(tree.root_node)[0] > 0  # the error stays where it is
