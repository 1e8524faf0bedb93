"""The pre-scan: from a file's text alone, could any selected rule fire?
Most files fail it and are never parsed."""

from __future__ import annotations

from collections.abc import Iterable

from portagpu.lint import meta, tokenlines
from portagpu.lint.model import Rule
from portagpu.lint.triple_quotes import PlainStrings

# names of the Python calls that carry CUDA source, and the words of a string
# that is plainly CUDA source (the CUDA side's lists when it is installed): a
# .py file can only break a CUDA rule through one of them
EMBED_TRIGGERS = ("RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel",
                  "load_inline", "SourceModule", "compile_with_cache",
                  "__global__", "__device__", "threadIdx", "__shfl", "__syncthreads", "__ballot")


def _embed_triggers() -> tuple[str, ...]:
    try:
        from portagpu.cuda.embedded import CUDA_CODE_MARKERS, SOURCE_ARGS

        return tuple(SOURCE_ARGS) + CUDA_CODE_MARKERS
    except (ImportError, AttributeError):
        return EMBED_TRIGGERS


def _minimal_tokens(tokens: Iterable[str]) -> tuple[str, ...] | None:
    return tokenlines.minimal(tokens) or None


GATE_LENGTH = 4  # a shorter shared piece (`smi`, `cu`) is in too many texts to rule any out
GATE_MEMBERS = 3  # a gate pays for its own search only when it stands for several tokens


def _gated(tokens: Iterable[str]) -> list[tuple[str, list[str]]]:
    """(gate, tokens) groups: the tokens holding a shared piece of at least
    GATE_LENGTH characters (`nvidia` in `nvidia-smi`, `import nvidia`,
    `gl.nvidia`, ...) sit behind it, so a text without the piece costs one
    search for the lot; each other token is its own gate. Greedy: the piece
    most tokens share first, the longest on a tie."""
    left = list(tokens)
    groups: list[tuple[str, list[str]]] = []
    while True:
        shared: dict[str, int] = {}
        for token in left:
            pieces = {token[i:j] for i in range(len(token)) for j in range(i + GATE_LENGTH, len(token) + 1)}
            for piece in pieces:
                shared[piece] = shared.get(piece, 0) + 1
        best = max(((n, len(p), p) for p, n in shared.items() if n >= GATE_MEMBERS), default=None)
        if best is None:
            break
        gate = best[2]
        groups.append((gate, [t for t in left if gate in t]))
        left = [t for t in left if gate not in t]
    return groups + [(token, [token]) for token in left]


class AnyToken:
    """Whether any of a fixed set of tokens is in a text. `in` (CPython's
    fast substring search) beats one big alternation regex ~2x, and a text
    without a group's gate is searched once for the whole group (_gated). A
    file that holds one token tends to hold it again in the next file (`cuda`
    in most GPU code), so the group and token that hit move to the front: a
    wanted file then costs one or two searches, not several."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self.groups = _gated(tokens)

    def __call__(self, text: str) -> bool:
        groups = self.groups
        for at, (gate, members) in enumerate(groups):
            if gate not in text:
                continue
            for index, token in enumerate(members):
                if token is gate or token in text:  # a token alone is its own gate: found already
                    if index:
                        members.insert(0, members.pop(index))
                    if at:
                        groups.insert(0, groups.pop(at))
                    return True
        return False


def _any_token(tokens: tuple[str, ...] | None) -> AnyToken | None:
    return AnyToken(tokens) if tokens is not None else None


def _has_any(text: str, search: AnyToken | None) -> bool:
    return search is not None and search(text)


def _has_word(text: str, words: list[str]) -> bool:
    """Whether any of `words` stands in text as a whole word outside a
    comment and outside a plain triple-quoted string, a docstring's words
    being prose (tokenlines.has_word); the one that did moves to the front."""
    in_text_block = PlainStrings(text).inside
    for index, word in enumerate(words):
        if tokenlines.has_word(text, word, in_text_block):
            if index:
                words.insert(0, words.pop(index))
            return True
    return False


class PreScan:
    """Decides from a file's text alone whether any selected rule could fire,
    so most files are never parsed. Substring search for the union of the rules'
    tokens; a rule with no tokens cannot be pre-filtered (every file is
    parsed). In a .py file the CUDA rules can only fire inside an embedded
    kernel source, so they count only next to a kernel-building call: their
    short tokens (`32`, `>>`, `mma`) would otherwise select half of all files."""

    def __init__(self, rules: Iterable[Rule], language: str = "cuda") -> None:
        rules = [r for r in rules if not meta.is_meta(r)]
        own = [r for r in rules if language == "cuda" or r.language == "python"]
        embedded = [r for r in rules if language == "python" and r.language == "cuda"]
        self.everything = any(not r.tokens for r in own)
        unconditional = [r for r in own if not r.requires]
        # what wants a file: the tokens of `token_match: word` rules only as
        # whole words outside comments (`cuda` in `is_cuda` or `# on cuda`
        # selects nothing), every other token anywhere
        by_word = language != "cuda"
        self.anywhere = anywhere = _minimal_tokens(
            t for r in unconditional if not (by_word and r.token_match == "word") for t in r.tokens
        )
        self.words = tuple(
            w
            for w in tokenlines.minimal(
                t for r in unconditional if by_word and r.token_match == "word" for t in r.tokens
            )
            if not any(t in w for t in anywhere or ())  # found already wherever it stands
        )
        # rules that fire only where one of their `requires` words is too:
        # (those words, their tokens); their tokens alone do not want a file
        self.conditional = tuple(
            (tokenlines.minimal(r.requires), tokenlines.minimal(r.tokens)) for r in own if r.requires and r.tokens
        )
        self.triggers = _minimal_tokens(_embed_triggers()) if embedded else None
        self.embedded_everything = any(not r.tokens for r in embedded)
        self.embedded = _minimal_tokens(t for r in embedded for t in r.tokens)
        # once no token is in a text, neither is a trigger that holds one
        # (`RawKernel`): the triggers left to search there
        unseen = [g for g in self.triggers or () if not any(t in g for t in anywhere or ())]
        # the searches, hits first (AnyToken)
        self._order = [
            _any_token(anywhere),
            _any_token(tuple(unseen)) if self.triggers is not None else None,
            _any_token(self.embedded),
        ]
        self._words = list(self.words)
        # asked only once no plain token is in a text: a rule whose required
        # words each hold such a token (PG806's `nccl`, `set_device`) is out too
        plain = anywhere or ()
        self._conditional = [
            (AnyToken(words), AnyToken(tokens))
            for words, tokens in self.conditional
            if any(not any(t in w for t in plain) for w in words)
        ]

    def wants(self, text: str) -> bool:
        tokens, triggers, embedded = self._order
        if self.everything or _has_word(text, self._words) or _has_any(text, tokens):
            return True
        if any(_has_any(text, rule_tokens) and _has_any(text, words) for words, rule_tokens in self._conditional):
            return True
        if not _has_any(text, triggers):
            return False
        return self.embedded_everything or _has_any(text, embedded)


