"""Jupyter notebooks (.ipynb): the code cells are linted as one Python module
(so `import torch` in cell 1 resolves `torch.cuda` in cell 5), IPython magics
(`!pip ...`, `%cd`, `x = !ls`, `%%bash` cells) are left out, and findings are
mapped back to the .ipynb file: `line`/`col` are positions in the file's own
text (what SARIF and GitHub annotations need), `cell` is (cell number, line
and column in the cell) for people (`nb.ipynb:cell 3:2:5`, as ruff prints).

Fixes edit the JSON text inside a cell's source string, escaped as the file
escapes it, so the notebook stays valid JSON; a fix that spans lines or a cell
whose source could not be located in the text gets no edit."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from portagpu.lines import split_lines
from portagpu.lint.model import Edit, Finding, Fix, ParseFailure

# cell magics whose body is still Python
_PYTHON_CELL_MAGICS = frozenset(
    {"time", "timeit", "capture", "prun", "debug", "pypy", "python", "python3"}
)
_MAGIC_ASSIGN = re.compile(r"^\s*[\w.,\s\[\]()*]+=\s*[!%]")


@dataclass(frozen=True)
class _Place:
    """Where one line of a cell lives in the .ipynb text."""

    cell: int  # 1-based, counting every cell
    line: int  # 1-based line within the cell
    part: str  # the JSON string (decoded) holding the line
    offset: int  # where the line starts within `part`
    raw_line: int  # 1-based line of the file holding `part`
    raw_col: int  # 0-based column of `part`'s first character; -1 if not located
    ascii: bool  # how the file escapes that string (ensure_ascii)


@dataclass
class Notebook:
    text: str  # the code cells as one Python module
    places: list[_Place | None]  # per module line (1-based - 1)
    errors: list[tuple[_Place, str, int]]  # a cell that does not parse: its place, message, column


def _encode(text: str, ascii: bool) -> str:
    return json.dumps(text, ensure_ascii=ascii)[1:-1]


class _Locator:
    """Finds each cell's source strings in the file text, in order."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.pos = 0
        self._line, self._line_pos = 1, 0

    def _line_of(self, index: int) -> tuple[int, int]:
        self._line += self.raw.count("\n", self._line_pos, index)
        self._line_pos = index
        start = self.raw.rfind("\n", 0, index) + 1
        return self._line, index - start

    def cell(self, key: str) -> int | None:
        found = self.raw.find(f'"{key}"', self.pos)
        if found < 0:
            return None
        self.pos = found
        return self._line_of(found)[0]

    def part(self, text: str) -> tuple[int, int, bool] | None:
        for ascii in (False, True):
            encoded = json.dumps(text, ensure_ascii=ascii)
            found = self.raw.find(encoded, self.pos)
            if found >= 0:
                self.pos = found + len(encoded)
                line, col = self._line_of(found + 1)
                return line, col, ascii
        return None


def _parts(source) -> list[str]:
    if isinstance(source, str):
        return [source]
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return source
    return []


def _cells(doc) -> tuple[list, str]:
    if isinstance(doc, dict) and isinstance(doc.get("cells"), list):
        return doc["cells"], "source"
    if isinstance(doc, dict) and isinstance(doc.get("worksheets"), list):  # nbformat 3
        cells = [
            c for ws in doc["worksheets"] if isinstance(ws, dict) for c in ws.get("cells") or []
        ]
        return cells, "input"
    raise ParseFailure("not a Jupyter notebook: no `cells` list", 1, 1)


def _code_lines(lines: list[str]) -> list[str]:
    """The cell's lines with IPython syntax replaced by `pass` (same indent)."""
    if lines and lines[0].lstrip().startswith("%%"):
        name = lines[0].lstrip()[2:].split(None, 1)
        if not name or name[0] not in _PYTHON_CELL_MAGICS:
            return [""] * len(lines)  # %%bash, %%html, %%writefile: not Python
        lines = ["", *lines[1:]]
    out, continued = [], False
    for line in lines:
        stripped = line.lstrip()
        magic = stripped.startswith(("%", "!")) or _MAGIC_ASSIGN.match(line) is not None
        magic = magic or (stripped.endswith("?") and not stripped.startswith("#"))
        if continued:
            out.append("")
        elif magic:
            out.append(line[: len(line) - len(stripped)] + "pass")
        else:
            out.append(line)
        continued = (magic or continued) and line.rstrip().endswith("\\")
    return out


def unwrap(raw: str) -> Notebook:
    """The notebook's code cells as one module, with the map back to the file."""
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        line, col = getattr(exc, "lineno", 1), getattr(exc, "colno", 1)
        raise ParseFailure(
            f"not a Jupyter notebook: {getattr(exc, 'msg', exc)}", line, col
        ) from None
    cells, key = _cells(doc)
    locate = _Locator(raw)
    chunks: list[list[str]] = []
    places: list[_Place | None] = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            continue
        key_line = locate.cell(key) or 1
        parts = _parts(cell.get(key, ""))
        located = [locate.part(p) for p in parts]
        if cell.get("cell_type") != "code":
            continue
        lines, cell_places = [], []
        for part, where in zip(parts, located, strict=True):
            raw_line, raw_col, ascii = where if where else (key_line, -1, False)
            offset = 0
            for piece in split_lines(part, keepends=True) or [""]:
                lines.append(piece.rstrip("\r\n"))
                cell_places.append(
                    _Place(number, len(lines), part, offset, raw_line, raw_col, ascii)
                )
                offset += len(piece)
        chunks.append(_code_lines(lines))
        places.extend(cell_places)
    text_lines = [line for chunk in chunks for line in chunk]
    return _parsed(Notebook("\n".join(text_lines) + "\n", places, []), text_lines)


def _parsed(book: Notebook, lines: list[str]) -> Notebook:
    """Blanks cells that do not parse (each becomes one PG901), so the rest is linted."""
    for _ in range(len(lines) + 1):
        try:
            ast.parse(book.text)
            return book
        except SyntaxError as exc:
            index = min(max((exc.lineno or 1) - 1, 0), len(book.places) - 1)
            place = book.places[index] if book.places else None
            if place is None:
                raise ParseFailure(f"SyntaxError: {exc.msg}", 1, 1) from None
            book.errors.append(
                (place, f"cell {place.cell}: SyntaxError: {exc.msg}", exc.offset or 1)
            )
            for i, other in enumerate(book.places):
                if other is not None and other.cell == place.cell:
                    lines[i] = ""
            book.text = "\n".join(lines) + "\n"
    return book


def _raw_col(place: _Place, col: int) -> int | None:
    """1-based file column of 1-based column `col` of the place's cell line."""
    if place.raw_col < 0:
        return None
    prefix = place.part[: place.offset + max(col, 1) - 1]
    return place.raw_col + len(_encode(prefix, place.ascii)) + 1


def _place(book: Notebook, line: int) -> _Place | None:
    return book.places[line - 1] if 0 < line <= len(book.places) else None


def _edit(book: Notebook, edit: Edit) -> Edit | None:
    start, end = _place(book, edit.line), _place(book, edit.end_line)
    if start is None or start is not end:
        return None  # spans cell lines: the JSON strings between cannot be edited safely
    col, end_col = _raw_col(start, edit.col), _raw_col(start, edit.end_col)
    if col is None or end_col is None:
        return None
    return Edit(start.raw_line, col, start.raw_line, end_col, _encode(edit.content, start.ascii))


def _fix(book: Notebook, fix: Fix | None) -> Fix | None:
    if fix is None or not fix.edits:
        return fix
    edits = [_edit(book, e) for e in fix.edits]
    if any(e is None for e in edits):
        return Fix("suggestion", fix.message)
    return Fix(fix.applicability, fix.message, tuple(edits))  # type: ignore[arg-type]


def to_file(book: Notebook, findings: Iterable[Finding]) -> list[Finding]:
    """Findings on the module mapped to the .ipynb text (and to cell:line)."""
    out = []
    for f in findings:
        start, end = _place(book, f.line), _place(book, f.end_line)
        if start is None:
            continue  # a line of no cell (cannot happen for a parsed module)
        end = end or start
        col = _raw_col(start, f.col) or 1
        end_col = _raw_col(end, f.end_col) or col + 1
        if (end.raw_line, end_col) < (start.raw_line, col):
            end_col = col + 1
        out.append(replace(f, line=start.raw_line, col=col, end_line=end.raw_line, end_col=end_col,
                           fix=_fix(book, f.fix), cell=(start.cell, start.line, f.col)))  # fmt: skip
    return out


def add_noqa(raw: str, findings: Sequence[Finding]) -> str:
    """`# noqa: CODE` appended inside the cell source line each finding is on."""
    from portagpu.lint.suppression import add_noqa as add_to_text

    by_line: dict[int, list[Finding]] = {}
    for f in findings:
        by_line.setdefault(f.line, []).append(f)
    lines = raw.split("\n")
    for number, group in by_line.items():
        if not 0 < number <= len(lines):
            continue
        line = lines[number - 1]
        body = line.rstrip()
        comma = "," if body.endswith(",") else ""
        literal = body[: len(body) - len(comma)].strip()
        try:
            value = json.loads(literal)
        except ValueError:
            continue
        if not isinstance(value, str) or not literal.startswith('"'):
            continue
        ascii = json.dumps(value, ensure_ascii=False) != literal
        newline = "\n" if value.endswith("\n") else ""
        code_line = value[: len(value) - len(newline)]
        if "\n" in code_line:
            continue
        noted = add_to_text(code_line, [replace(f, line=1) for f in group], "python")
        indent = line[: len(line) - len(line.lstrip())]
        lines[number - 1] = indent + json.dumps(noted + newline, ensure_ascii=ascii) + comma
    return "\n".join(lines)


def check_notebook_parses(raw: str) -> None:
    """For --fix: the fixed file is still a notebook whose code cells parse."""
    book = unwrap(raw)
    if book.errors:
        raise ParseFailure(book.errors[0][1], book.errors[0][0].raw_line, 1)
