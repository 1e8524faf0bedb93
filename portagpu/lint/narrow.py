"""Parse less: blank out the top-level functions and classes of a Python file
that no selected rule could care about, before the checkers parse it.

Parsing (`ast`) is about half of a cold run, and in GPU-heavy files about a
third of the text sits in top-level `def`/`class` blocks that contain none of
the rules' tokens. Such a block is replaced by blank lines, so every other
line keeps its number and columns: findings, fixes and suppressions need no
translation. A block is kept if it mentions any token outside a comment, or
uses (as a whole identifier) any name that a token line binds (`from
torch.cuda import synchronize`, `DEV = "cuda"`), so aliases defined elsewhere
still resolve; so is a block that calls a top-level helper mentioning a
token. The methods of a kept class (and of the classes it nests) are
narrowed the same way, and so are long top-level list/dict displays (data
tables: no checker reads one through its name). Boundaries come from a scan
that skips triple-quoted strings; if the narrowed text does not parse, the
engine parses the whole file instead (a syntax error keeps its real position)."""

from __future__ import annotations

import bisect
import keyword
import re
from collections.abc import Callable, Iterable

from portagpu.lint import tokenlines
from portagpu.lint.triple_quotes import PlainStrings, triple_quoted_spans

# triple-quoted strings (_string_interiors): a column-0 `def` inside a
# docstring is not code. (Single-quoted strings cannot span lines without a
# backslash.) A triple quote misread can only merge blocks, which is safe, or
# split one, which the parse check after narrowing catches.
_BLOCK_START = re.compile(r"(?:@|def[ \t(]|class[ \t(:]|async[ \t]+def[ \t])")
_FROM_IMPORT = re.compile(r"[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*(\([^)]*\)?|[^\n;#]*)")
_IMPORT_AS = re.compile(r"[ \t]*import[ \t]+[\w.]+[ \t]+as[ \t]+(\w+)")
_ASSIGN = re.compile(r"[ \t]*(?:[\w.]+\.)?(\w+)[ \t]*(?::[^=\n]*)?=(?!=)")
_TABLE = re.compile(r"(?:[\w.]+\.)?\w+[ \t]*(?::[^=\n]*)?=[ \t]*[\[{]")  # NAME = [  /  NAME: T = {
_NAME = re.compile(r"[A-Za-z_]\w*")
_ATTRIBUTE_ASSIGN = re.compile(r"[ \t]*[\w.]+\.\w+[ \t]*(?::[^=\n]*)?=(?!=)")  # self.dev = ...
_DEF_NAME = re.compile(r"(?:async[ \t]+)?def[ \t]+(\w+)")

MIN_SAVING = 0.10  # below this share of the text, narrowing is not worth a copy
HELPER_LINES = 20  # a def this short that mentions a token is a helper whose callers matter
DATA_LINES = 20  # a list/dict display this long is a data table (`_is_table`)


def _lines_with(index: tokenlines.TokenLines, tokens: Iterable[str]) -> set[int]:
    lines: set[int] = set()
    for token in tokens:
        lines.update(index.of(token))
    return lines


def bound_names(
    text: str,
    tokens: Iterable[str],
    starts: list[int] | None = None,
    token_lines: set[int] | None = None,
    is_local: Callable[[int], bool] | None = None,
) -> set[str]:
    """Names bound on lines that mention a token (imports, assignments): code
    elsewhere can reach a GPU API through them without spelling a token. A
    plain name bound on a line where `is_local(line)` (a function's body) is
    that function's local: no other block sees it (an attribute, `self.dev =`,
    still counts)."""
    if starts is None or token_lines is None:
        index = tokenlines.for_text(text)
        starts = index.starts
        token_lines = _lines_with(index, tokenlines.minimal(tokens))
    names: set[str] = set()
    for line in token_lines:
        if is_local is not None and is_local(line) and not _ATTRIBUTE_ASSIGN.match(text, starts[line - 1]):
            continue
        begin = starts[line - 1]
        end = starts[line] if line < len(starts) else len(text)
        body = text[begin:end]
        m = _FROM_IMPORT.match(body)
        if m:
            group = m.group(1)
            if group.startswith("(") and not group.endswith(")"):
                close = text.find(")", begin)
                group = text[begin + m.start(1) : close if close >= 0 else len(text)]
            for part in group.strip("()").split(","):
                words = part.split()
                if words:
                    names.add(words[-1])
            continue
        m = _IMPORT_AS.match(body) or _ASSIGN.match(body)
        if m:
            names.add(m.group(1))
    return {n for n in names if _NAME.fullmatch(n) and n != "_"}


def _imported_names(statement: str) -> list[str]:
    """The names an `import` / `from ... import` statement (its text, any
    indent) binds: `import a.b` binds a, `import a as b` b."""
    body = statement.split("#", 1)[0].strip()
    if body.startswith("from"):
        _, _, body = body.partition(" import")
        parts = body.strip(" \t()\\\r\n").split(",")
        return [p.split()[-1] for p in parts if p.split()]
    names = []
    for part in body[len("import"):].split(","):
        words = part.split()
        if words:
            names.append(words[-1] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0])
    return names


_IMPORT_START = re.compile(r"[ \t]*(?:import[ \t]|from[ \t]+[\w.]+[ \t]+import\b)")


def _local_imports_used(index: tokenlines.TokenLines, inside: set[int], token_lines: set[int]) -> set[int]:
    """The import lines inside functions or classes that bind a name a token
    line uses and no module-level import binds (`torch` imported in a helper,
    then `torch.cuda.synchronize()` elsewhere): the checkers read every
    import of the module, so the block holding one stays."""
    lines, text, starts = index.lines, index.text, index.starts
    module_level: set[str] = set()
    local: dict[str, list[int]] = {}
    for number in index.of("import"):
        line = lines[number - 1]
        if number in inside or not _IMPORT_START.match(line):
            continue
        statement = line
        if "(" in line and ")" not in line:  # from x import (a,\n b)
            close = text.find(")", starts[number - 1])
            statement = text[starts[number - 1] : close if close >= 0 else len(text)]
        if line[:1] in (" ", "\t"):
            for name in _imported_names(statement):
                local.setdefault(name, []).append(number)
        else:
            module_level.update(_imported_names(statement))
    return {
        number
        for name, numbers in local.items()
        if name not in module_level and _NAME.fullmatch(name) and index.word_lines([name], token_lines)
        for number in numbers
    }


def _is_comment(line: str) -> bool:
    return line.lstrip(" \t").startswith("#")


def _string_interiors(spans: list[tuple[int, int, bool]], starts: list[int]) -> set[int]:
    """1-based lines that begin inside a multi-line (triple-quoted) string."""
    inside: set[int] = set()
    for begin, end, _ in spans:
        first = bisect.bisect_right(starts, begin)
        last = bisect.bisect_right(starts, end - 3)
        if last > first:
            inside.update(range(first + 1, last + 1))
    return inside


_HEAD = re.compile(r"^[^\s#)\]}]", re.M)  # a column-0 line that may start a statement
# the same after a line break: a literal first character lets `re` skip ahead
# fast, where `^` under re.M is tried at every offset (~6x slower)
_HEAD_AFTER_BREAK = re.compile(r"\n[^\s#)\]}]")


def _head_offsets(text: str) -> list[int]:
    """Offsets of the matches of `_HEAD`."""
    offsets = [0] if _HEAD.match(text) else []
    offsets.extend(m.start() + 1 for m in _HEAD_AFTER_BREAK.finditer(text))
    return offsets


def narrow(text: str, tokens: Iterable[str], words: Iterable[str] = ()) -> str | None:
    """The text with irrelevant top-level blocks blanked, or None when that
    would save too little to be worth it. A block matters where it holds one
    of `tokens` (anywhere but a comment line) or one of `words` as a whole
    word in code: the tokens of rules that only count such words (a rule's
    `token_match: word`), so `is_cuda` or a docstring's "on cuda" keeps
    nothing for them."""
    tokens = tokenlines.minimal_of(frozenset(tokens))
    words = tuple(w for w in tokenlines.minimal_of(frozenset(words)) if not any(t in w for t in tokens))
    if not (tokens or words) or ("def" not in text and "class" not in text):
        return None
    index = tokenlines.for_text(text)
    lines, starts = index.lines, index.starts
    spans = triple_quoted_spans(text)
    inside = _string_interiors(spans, starts)
    # top-level statement starts: column-0 code lines outside strings, not a
    # closing bracket, not after a backslash continuation
    heads = []
    for offset in _head_offsets(text):
        number = bisect.bisect_right(starts, offset)
        if number in inside or (number > 1 and lines[number - 2].rstrip("\r\n").endswith("\\")):
            continue
        heads.append(number)
    if not heads:
        return None
    # a token in a comment-only line cannot reach a checker (they read the tree)
    token_lines = {n for n in _lines_with(index, tokens) if not _is_comment(lines[n - 1])}
    if words:
        token_lines |= index.code_word_lines(words, PlainStrings(text, spans).inside)
    names = bound_names(text, tokens, starts, token_lines, _function_locals(heads, lines, text, starts))
    # a multi-line top-level assignment (CONFIGS = [\n triton.Config(..., num_warps=8),\n])
    # binds its name even though the token sits on a later line
    # and so does a short top-level helper that mentions a token (`def _smi(): return "nvidia-smi"`)
    for line in token_lines:
        at = bisect.bisect_right(heads, line) - 1
        if at >= 0 and heads[at] != line:
            head_line = lines[heads[at] - 1]
            m = _ASSIGN.match(head_line)
            if m is None and at + 1 < len(heads) and heads[at + 1] - heads[at] <= HELPER_LINES:
                m = _DEF_NAME.match(head_line)
            if m:
                names.add(m.group(1))
    # a name is used where it stands as a whole identifier (`dense` is not
    # used by `bsr_dense_addmm`), and not by a comment
    relevant = sorted(
        token_lines
        | {
            n
            for n in index.word_lines(n for n in names if not any(t in n for t in tokens))
            if not _is_comment(lines[n - 1])
        }
        | _local_imports_used(index, inside, token_lines)
    )
    blank: list[tuple[int, int, str]] = []
    for head, stop, irrelevant in _blocks(heads, lines, relevant, len(lines) + 1):
        if irrelevant:
            blank.append((head, stop, ""))
        else:  # a class that matters: its methods that do not can still go
            blank.extend(_method_blanks(lines, head, stop, inside, relevant))
    saved = sum(starts[b - 1] - starts[a - 1] for a, b, _ in blank)
    if saved < MIN_SAVING * len(text):
        return None
    out = []
    previous = 1
    for a, b, indent in sorted(blank):
        out.append(text[starts[previous - 1] : starts[a - 1]])
        # a blanked method leaves `pass` so that its class body stays valid
        out.append(f"{indent}pass\n" + "\n" * (b - a - 1) if indent else "\n" * (b - a))
        previous = b
    out.append(text[starts[previous - 1] :])
    narrowed = "".join(out)
    tokenlines.remember(index.narrowed(narrowed, blank))  # the checker's searches start from ours
    return narrowed


def _function_locals(heads: list[int], lines: list[str], text: str, starts: list[int]) -> Callable[[int], bool]:
    """Whether a line lies in the body of a top-level function that
    declares nothing `global` or `nonlocal`, so a plain name it binds is
    that function's own (a `def` line is its head, never its body)."""
    escapes = "global" in text or "nonlocal" in text

    def local(line: int) -> bool:
        at = bisect.bisect_right(heads, line) - 1
        if at < 0 or heads[at] == line or not _DEF_NAME.match(lines[heads[at] - 1]):
            return False
        if not escapes:
            return True
        begin = starts[heads[at] - 1]
        end = starts[heads[at + 1] - 1] if at + 1 < len(heads) else len(text)
        return text.find("global", begin, end) < 0 and text.find("nonlocal", begin, end) < 0

    return local


def _blocks(heads: list[int], lines: list[str], relevant: list[int], end: int):
    """(head, stop, irrelevant) for each def/class among statement heads at
    one indentation (decorators belong to the definition after them) and for
    each top-level data table (`_is_table`)."""
    index = 0
    while index < len(heads):
        head = heads[index]
        if not _BLOCK_START.match(lines[head - 1].lstrip(" \t")):
            stop = heads[index + 1] if index + 1 < len(heads) else end
            if stop - head >= DATA_LINES and _is_table(lines[head - 1]):
                yield head, stop, _irrelevant(relevant, head, stop)
            index += 1
            continue
        end_index = index
        while end_index + 1 < len(heads) and lines[heads[end_index] - 1].lstrip(" \t").startswith("@"):
            end_index += 1
        stop = heads[end_index + 1] if end_index + 1 < len(heads) else end
        yield head, stop, _irrelevant(relevant, head, stop)
        index = end_index + 1


def _irrelevant(relevant: list[int], head: int, stop: int) -> bool:
    first = bisect.bisect_left(relevant, head)
    return first == len(relevant) or relevant[first] >= stop


def _is_table(line: str) -> bool:
    """A column-0 `NAME = [` / `NAME: T = {` (not `else: x = [`): a list,
    dict or set display. Nothing reads such a value through its name (the
    embedded-source resolver follows names to strings, the Python checkers to
    constants), so one that holds no token and no bound name can go."""
    first = _NAME.match(line)
    return first is not None and not keyword.iskeyword(first.group()) and _TABLE.match(line) is not None


_CLASS_START = re.compile(r"[ \t]*class[ \t]+\w+[ \t]*[(:]")
HEADER_LINES = 30  # a class header longer than this (its bases spread out) is left alone


def _class_header_end(lines: list[str], class_line: int, stop: int) -> int | None:
    """The line ending a class header, `class X(A, B):` on one line or its
    bases over several; None when the line starts no class or its body
    shares the header's line (`class X: pass`)."""
    if not _CLASS_START.match(lines[class_line - 1]):
        return None
    depth = 0
    for number in range(class_line, min(stop, class_line + HEADER_LINES)):
        code = lines[number - 1].split("#", 1)[0]
        depth += code.count("(") + code.count("[") - code.count(")") - code.count("]")
        if depth <= 0:
            return number if code.rstrip().endswith(":") else None
    return None


def _method_blanks(lines: list[str], head: int, stop: int, inside: set[int], relevant: list[int]):
    """Blocks to blank inside a class (its header on one line or its bases
    over several): its methods that mention nothing relevant, and so on in
    the classes it nests."""
    class_line = next((n for n in range(head, stop) if not lines[n - 1].lstrip(" \t").startswith("@")), None)
    header_end = _class_header_end(lines, class_line, stop) if class_line is not None else None
    if header_end is None:
        return []
    indent = None
    deeper = ()  # indent + " ", indent + "\t": a line deeper than the methods' heads
    heads = []
    for number in range(header_end + 1, stop):
        line = lines[number - 1]
        if line.startswith(deeper):
            continue  # neither a head nor a dedent, whatever else holds
        body = line.lstrip(" \t")
        if not body or body[0] in "#\r\n)]}" or number in inside:
            continue
        if lines[number - 2].rstrip("\r\n").endswith("\\"):
            continue
        prefix = line[: len(line) - len(body)]
        if indent is None:
            if not prefix:
                return []
            indent = prefix
            deeper = (indent + " ", indent + "\t")
        if prefix == indent:
            heads.append(number)
        elif len(prefix) < len(indent) or not prefix.startswith(indent):
            return []  # inconsistent indentation: leave this class alone
    if indent is None:
        return []
    blank = []
    for a, b, irrelevant in _blocks(heads, lines, relevant, stop):
        if irrelevant:
            blank.append((a, b, indent))
        else:
            blank.extend(_method_blanks(lines, a, b, inside, relevant))
    return blank
