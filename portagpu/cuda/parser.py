"""tree-sitter-cuda parsing, shared by every CUDA checker and by kernel_signature.

tree_sitter is imported on first use only, so `import portagpu` and the runtime
stay light; the Parser and Language are built once per process.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from portagpu.errors import PortagpuError
from portagpu.lines import line_starts_bytes

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node, Parser, Tree


class CudaParserUnavailable(PortagpuError):
    """tree-sitter or tree-sitter-cuda is not installed."""


@lru_cache(maxsize=1)
def get_parser() -> Parser:
    try:
        import tree_sitter
        import tree_sitter_cuda
    except ImportError as exc:  # pragma: no cover - both are core dependencies
        raise CudaParserUnavailable(
            f"CUDA analysis needs tree-sitter and tree-sitter-cuda ({exc.name} is missing): "
            "pip install tree-sitter tree-sitter-cuda"
        ) from None
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


_LONE_CR = re.compile(rb"\r(?!\n)")


def parse(text: str | bytes) -> Tree:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if b"\r" in data:  # a lone \r ends a line for a C compiler; tree-sitter wants \n (same length)
        data = _LONE_CR.sub(b"\n", data)
    return get_parser().parse(data)


def walk(node: Node) -> Iterator[Node]:
    """Every named descendant of node (node included), in source order."""
    cursor = node.walk()
    while True:
        current = cursor.node
        if current.is_named:
            yield current
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def text_of(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def ancestors(node: Node) -> Iterator[Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def enclosing(node: Node, *types: str) -> Node | None:
    for parent in ancestors(node):
        if parent.type in types:
            return parent
    return None


def error_spans(tree: Tree) -> list[tuple[int, int]]:
    """Byte spans of ERROR/MISSING nodes (empty for a clean parse)."""
    if not tree.root_node.has_error:
        return []
    spans = []
    for node in walk(tree.root_node):
        if node.type == "ERROR" or node.is_missing:
            spans.append((node.start_byte, node.end_byte))
    return spans


class LineIndex:
    """Maps UTF-8 byte offsets of a text to 1-based (line, character column)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        data = text.encode("utf-8", "surrogatepass")
        self.data = data
        self.starts = line_starts_bytes(data)  # \r\n, \r, \n: the linter's one model

    def position(self, byte_offset: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, byte_offset) - 1
        start = self.starts[row]
        if self.ascii:
            return row + 1, byte_offset - start + 1
        col = len(self.data[start:byte_offset].decode("utf-8", "replace"))
        return row + 1, col + 1

    def char_offset(self, byte_offset: int) -> int:
        if self.ascii:
            return byte_offset
        return len(self.data[:byte_offset].decode("utf-8", "replace"))


def node_span(index: LineIndex, node: Any) -> tuple[int, int, int, int]:
    line, col = index.position(node.start_byte)
    end_line, end_col = index.position(node.end_byte)
    return line, col, end_line, end_col
