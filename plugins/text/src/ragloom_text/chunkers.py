"""The ragloom chunkers of this package: thin ``Chunker`` subclasses over the pure splitters.

Every chunker yields exact :class:`ragloom.ChunkSpan` pieces, so a chunk's text is
``parent.content[start:end]`` with no searching. With ``chunk_overlap=0`` the spans tile the
document; no chunk exceeds ``chunk_size`` (in the units of the length function) except a single
atom that cannot be split, marked ``metadata["oversized"] = True``.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from ragloom import Chunker, ChunkSpan, ConfigurationError, Document, InvalidInputError
from ragloom.chunking import Piece

from ragloom_text._code import code_spans
from ragloom_text._markdown import markdown_spans
from ragloom_text._regex import PatternTimeout, compile_pattern
from ragloom_text._regex import error as regex_error
from ragloom_text._sentences import sentence_spans
from ragloom_text._spans import Span, recursive_spans
from ragloom_text.lengths import LengthFunction, resolve_length_function

__all__ = [
    "DEFAULT_SEPARATORS",
    "CodeChunker",
    "MarkdownChunker",
    "PatternTimeoutError",
    "RecursiveCharacterTextSplitter",
    "SentenceChunker",
]

LengthSpec = str | Mapping[str, Any] | Callable[[str], int]
"""A length function: a registered name, a ``{name, params}`` table, or a callable."""


class PatternTimeoutError(InvalidInputError):
    """A separator pattern (``is_separator_regex=True``) took longer than its time limit on a
    document: it backtracks catastrophically on that text. The document fails (it is not
    retried: the same pattern on the same text would time out again); the run goes on."""

DEFAULT_SEPARATORS: tuple[str, ...] = (
    "\n\n", "\n", ". ", "! ", "? ", "\u3002", "\uff01", "\uff1f", " ", "",
)  # fmt: skip
"""Prose: paragraph, line, sentence end (also the CJK full stops), space, then characters."""

_OVERSIZED: Mapping[str, Any] = {"oversized": True}

PieceSpan = tuple[int, int, Mapping[str, Any] | None]


class SpanPieces:
    """What :meth:`split` returns: the chunk spans of one document, iterable as
    :class:`ChunkSpan` pieces. ``build_chunks`` builds chunks from its plain ``spans`` directly
    (:meth:`Chunker.build_chunks_from_spans`), without a piece object per chunk."""

    __slots__ = ("spans",)

    def __init__(self, spans: list[PieceSpan]) -> None:
        self.spans = spans

    def __iter__(self) -> Iterator[ChunkSpan]:
        return (ChunkSpan(a, b, meta) for a, b, meta in self.spans)

    def __len__(self) -> int:
        return len(self.spans)


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigurationError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ConfigurationError(f"{name} must be >= {minimum}, got {value}")
    return value


class _SizedChunker(Chunker):
    """Shared parameters: ``chunk_size``, ``chunk_overlap`` and the length function.

    ``length_function`` is a registered name (``"chars"``, ``"words"``, ``"tokens"``, ...), a
    table ``{"name": "tokens", "params": {"tokenizer": "path/to/tokenizer.json"}}``, a length
    object (``TokenCount(...)``) or any callable ``str -> int`` (Python only: a pipeline file
    can rebuild only registered lengths).
    """

    # Every chunk is an exact span and together they cover the document (checked per item);
    # what is cut depends only on the text and its format, so a moved file still hits.
    lossless = True
    cache_scope = "content"

    def __init__(
        self,
        chunk_size: int = 500,
        chunk_overlap: int = 0,
        *,
        length_function: LengthSpec = "chars",
        cache: Any = None,
        policy: Any = None,
        name: str | None = None,
        content_format: str | None = None,
    ) -> None:
        super().__init__(cache=cache, policy=policy, name=name, content_format=content_format)
        self.chunk_size = _check_int("chunk_size", chunk_size, 1)
        self.chunk_overlap = _check_int("chunk_overlap", chunk_overlap, 0)
        if self.chunk_overlap >= self.chunk_size:
            raise ConfigurationError(
                f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})"
            )
        try:
            self._length_config, self._length = resolve_length_function(length_function)
        except (TypeError, ValueError) as exc:
            message = str(exc)
            if "length_function" not in message:
                message = f"length_function: {message}"
            raise ConfigurationError(message) from exc
        self.length_function: LengthSpec = length_function
        #: The length function as a callable (``len`` for characters), e.g. for checks.
        self.length: LengthFunction = self._length or len

    def config(self) -> Mapping[str, Any]:
        return {
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "length_function": self._length_config,
        }

    @property
    def config_hash(self) -> str:
        """The config's hash, plus what the length function loaded (a tokenizer file's
        digest): editing the file changes the cache identity even though the config does not."""
        base = super().config_hash
        fingerprint = getattr(self._length, "fingerprint", None)
        extra = fingerprint() if callable(fingerprint) else None
        if extra is None:
            return base
        return hashlib.sha256(f"{base}\n{extra}".encode()).hexdigest()[:32]

    def spans(self, text: str) -> list[Span]:
        """``(start, end, oversized)`` for ``text``: what :meth:`split` yields, as tuples."""
        raise NotImplementedError

    def piece_spans(self, text: str) -> list[PieceSpan]:
        """``(start, end, metadata)`` for ``text``: the pieces :meth:`split` returns."""
        return [(a, b, _OVERSIZED if oversized else None) for a, b, oversized in self.spans(text)]

    def split(self, document: Document) -> SpanPieces:
        return SpanPieces(self.piece_spans(document.content))

    def split_text(self, text: str) -> list[str]:
        """The chunks of ``text`` as strings (exact slices of it, in order).

        The same strings as ``[c.content for c in chunker.chunk(text)]``, sliced straight from
        :meth:`piece_spans`: the inherited path hashes the text for a document id, validates a
        ``Document`` and builds a chunk document (id, metadata, offsets) per chunk only to read
        its text back, which took a third to a half of the time (benchmarks/bench_interop.py).
        A subclass that changes how pieces become chunks takes the inherited path.
        """
        if type(text) is not str or not _slices_spans(type(self)):
            return super().split_text(text)
        return [text[a:b] for a, b, _ in self.piece_spans(text)]

    def build_chunks(self, parent: Document, pieces: Iterable[Piece]) -> list[Document]:
        if type(pieces) is SpanPieces:  # our own split(): no piece objects needed
            return self.build_chunks_from_spans(parent, pieces.spans)
        return super().build_chunks(parent, pieces)


@functools.cache
def _slices_spans(cls: type[_SizedChunker]) -> bool:
    """Whether ``cls(...).split_text(text)`` may slice ``piece_spans(text)`` directly: its
    ``chunk``, ``split``, ``asplit``, ``build_chunks`` and input check are the ones it
    inherits, and it takes plain text (the document ``chunk(text)`` would build and check)."""
    accepted = cls.accepted_content_formats
    return (
        cls.chunk is Chunker.chunk
        and cls.split is _SizedChunker.split
        and cls.build_chunks is _SizedChunker.build_chunks
        and cls.validate_input is Chunker.validate_input
        and cls.asplit is Chunker.asplit
        and (accepted is None or "text" in accepted)
    )


class RecursiveCharacterTextSplitter(_SizedChunker):
    """Splits at the first separator that gives a cut, packing each chunk as full as it can.

    Each chunk ends at the farthest occurrence of the earliest separator in ``separators`` that
    keeps it within ``chunk_size``; separators stay with the text before them. ``""`` means
    "any character" and guarantees the limit; without it, a piece with no separator longer than
    the limit becomes one oversized chunk. With ``is_separator_regex=True`` the separators are
    regular expressions and a boundary falls where a match ends.
    """

    step_id: ClassVar[str] = "ragloom-text/recursive"

    def __init__(
        self,
        chunk_size: int = 500,
        chunk_overlap: int = 0,
        *,
        separators: Sequence[str] | None = DEFAULT_SEPARATORS,
        is_separator_regex: bool = False,
        length_function: LengthSpec = "chars",
        cache: Any = None,
        policy: Any = None,
        name: str | None = None,
        content_format: str | None = None,
    ) -> None:
        super().__init__(
            chunk_size,
            chunk_overlap,
            length_function=length_function,
            cache=cache,
            policy=policy,
            name=name,
            content_format=content_format,
        )
        if not isinstance(is_separator_regex, bool):
            raise ConfigurationError(
                f"is_separator_regex must be a bool, got {type(is_separator_regex).__name__}"
            )
        self.is_separator_regex = is_separator_regex
        self.separators = self._check_separators(separators, is_separator_regex)

    @staticmethod
    def _check_separators(separators: object, is_regex: bool) -> tuple[str, ...]:
        if separators is None:
            return DEFAULT_SEPARATORS
        if isinstance(separators, str) or not isinstance(separators, Sequence):
            raise ConfigurationError(
                f"separators must be a list of strings, got {type(separators).__name__}"
            )
        if not separators:
            raise ConfigurationError("separators must not be empty")
        for i, sep in enumerate(separators):
            if not isinstance(sep, str):
                raise ConfigurationError(
                    f"separators[{i}] must be a string, got {type(sep).__name__}"
                )
            if is_regex and sep:
                try:
                    compile_pattern(sep)
                except regex_error as exc:
                    raise ConfigurationError(
                        f"separators[{i}] {sep!r} is not a valid regular expression: {exc}"
                    ) from exc
        return tuple(separators)

    def config(self) -> Mapping[str, Any]:
        return {
            **super().config(),
            "separators": list(self.separators),
            "is_separator_regex": self.is_separator_regex,
        }

    def spans(self, text: str) -> list[Span]:
        try:
            return recursive_spans(
                text,
                self.chunk_size,
                self.chunk_overlap,
                self.separators,
                is_separator_regex=self.is_separator_regex,
                length=self._length,
            )
        except PatternTimeout as exc:
            raise PatternTimeoutError(self._timeout_message(exc)) from None

    def piece_spans(self, text: str) -> list[PieceSpan]:
        try:
            return recursive_spans(  # type: ignore[return-value]
                text,
                self.chunk_size,
                self.chunk_overlap,
                self.separators,
                is_separator_regex=self.is_separator_regex,
                length=self._length,
                markers=(None, _OVERSIZED),
            )
        except PatternTimeout as exc:
            raise PatternTimeoutError(self._timeout_message(exc)) from None

    def _timeout_message(self, exc: PatternTimeout) -> str:
        index = self.separators.index(exc.pattern) if exc.pattern in self.separators else "?"
        return f"{self.name}: separators[{index}] {exc}"


class MarkdownChunker(_SizedChunker):
    """Splits Markdown along its heading structure, keeping code blocks and tables whole.

    Cuts prefer heading starts (``#`` before ``##`` ...), then blank lines and the edges of
    fenced code blocks and tables, then line ends, sentence ends, spaces, characters. A fenced
    code block (or YAML front matter) or a table is never cut unless it alone exceeds
    ``chunk_size``; then it is cut at line ends (and a single line longer than the limit at
    spaces, then characters, so the limit holds; never at sentence ends inside code). Every
    chunk's ``metadata["headings"]`` is the heading path (outermost first) of the deepest
    section containing all of it. ATX headings and setext underlines are recognised at
    column 0; fences may be indented.

    Accepts ``markdown`` and ``text`` documents: plain text is valid Markdown, while other
    formats (code, HTML, reST) would have their comments or underlines misread as headings.
    """

    step_id: ClassVar[str] = "ragloom-text/markdown"
    accepted_content_formats: ClassVar[frozenset[str] | None] = frozenset({"markdown", "text"})

    def markdown_spans(self, text: str) -> list[tuple[int, int, dict[str, Any]]]:
        """``(start, end, metadata)`` for ``text``: what :meth:`split` yields, as tuples."""
        return markdown_spans(text, self.chunk_size, self.chunk_overlap, self._length)

    def spans(self, text: str) -> list[Span]:
        return [(a, b, bool(m.get("oversized"))) for a, b, m in self.markdown_spans(text)]

    def piece_spans(self, text: str) -> list[PieceSpan]:
        return self.markdown_spans(text)  # type: ignore[return-value]


class SentenceChunker(_SizedChunker):
    """Packs whole sentences up to ``chunk_size``.

    A sentence ends after ``.``, ``!``, ``?``, ``…`` (or a CJK full stop), closing quotes or
    brackets and the following whitespace, unless the next word starts in lower case (so
    ``e.g. this`` stays whole); a blank line also ends one. A sentence longer than the limit is
    cut at line ends, then spaces, then characters.
    """

    step_id: ClassVar[str] = "ragloom-text/sentence"

    def spans(self, text: str) -> list[Span]:
        return sentence_spans(text, self.chunk_size, self.chunk_overlap, self._length)


class CodeChunker(_SizedChunker):
    """Splits source code between top-level definitions where it can.

    Cuts prefer the start of a top-level definition after a blank line (a line at column 0
    opening with ``def``, ``class``, ``function``, ``fn``, ``func``, ``impl``, ``struct``,
    ``export``, ``public``, ... or a decorator, attribute or doc comment), then a nested
    definition after a blank line, then any blank line, then line ends; a line longer than the
    limit is cut at spaces, then characters.
    """

    step_id: ClassVar[str] = "ragloom-text/code"

    def spans(self, text: str) -> list[Span]:
        return code_spans(text, self.chunk_size, self.chunk_overlap, self._length)
