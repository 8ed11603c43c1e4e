"""The chunker family: ``Chunker``, its piece types, and ``ChunkerRouter``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, ClassVar

from pydantic import BaseModel

from ._construct import construct_chunks, construct_document
from ._inputs import wrong_item
from .context import ExecutionContext
from .errors import ComponentTypeError, InvalidInputError, RagloomError, UnroutedItemError
from .models import ContentFormat, Document
from .policy import Policy
from .routed import RoutedStep
from .step import PipelineStep

__all__ = ["ChunkSpan", "ChunkText", "Chunker", "ChunkerRouter", "Piece", "as_documents"]


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """An exact ``[start, end)`` span of the parent's content, with optional metadata."""

    start: int
    end: int
    metadata: Mapping[str, Any] | None = None

    def __init__(self, start: int, end: int, metadata: Mapping[str, Any] | None = None) -> None:
        # What the generated frozen ``__init__`` does, through the slots' own setters: a
        # chunker yields one span per chunk, so this runs tens of thousands of times a run.
        _set_start(self, start)
        _set_end(self, end)
        _set_metadata(self, metadata)


_slots: dict[str, Any] = dict(vars(ChunkSpan))
_set_start = _slots["start"].__set__
_set_end = _slots["end"].__set__
_set_metadata = _slots["metadata"].__set__
del _slots
#: ``(start, end, metadata)`` of a span, in one C-level call.
_span_fields = attrgetter("start", "end", "metadata")
_ONLY_SPANS = {ChunkSpan}


@dataclass(frozen=True, slots=True)
class ChunkText:
    """A chunk whose text is *not* a slice of the parent (e.g. rendered from structure).

    The chunk gets ``start = end = None``; its metadata must say how it maps back.
    """

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


Piece = str | tuple[str, Mapping[str, Any]] | ChunkSpan | ChunkText


def _note_no_chunks(chunker: Chunker, item: Document, context: Any) -> None:
    """Record that ``chunker`` (not declared lossless) returned no chunk for the non-empty
    ``item``: the run warns once per chunker, with the count (see ``warn_no_chunks``)."""
    stats_for = getattr(context, "stats_for", None)
    if stats_for is not None:
        stats_for(chunker).no_chunks.append(item.id)


class Chunker(PipelineStep[Document]):
    """Splits each document into chunks with exact lineage.

    Implement :meth:`split` (sync) or :meth:`asplit` (async). Both feed the same chunk building:
    deterministic ids (``"{parent.id}#{index}"``), exact ``[start, end)`` spans, the parent's
    metadata inherited (a piece's own metadata on top), and :attr:`content_format` overriding
    the parent's format when set.

    A chunker that declares itself :attr:`lossless` has every result checked: its spans must
    cover the whole document (overlaps allowed; gaps of whitespace only when
    :attr:`whitespace_gaps` says so), else the item fails naming the first gap. The check is one
    pass over the spans.
    """

    event_name = "Chunking"
    input_type = Document
    kind = "chunker"

    #: Formats this chunker accepts; ``None`` accepts any. May include custom strings.
    accepted_content_formats: ClassVar[frozenset[str] | None] = None
    #: Format of the produced chunks; ``None`` keeps the parent's.
    content_format: str | None = None
    #: Whether the chunks' spans always cover the whole document (checked on every item).
    lossless: ClassVar[bool] = False
    #: With :attr:`lossless`: whether gaps holding only whitespace are allowed between spans.
    whitespace_gaps: ClassVar[bool] = False

    def __init__(
        self,
        *,
        cache: Any = None,
        policy: Policy | None = None,
        name: str | None = None,
        content_format: str | None = None,
    ) -> None:
        super().__init__(cache=cache, policy=policy, name=name)
        cls = type(self)
        if cls.split is Chunker.split and cls.asplit is Chunker.asplit:
            raise ComponentTypeError(f"{cls.__name__} must implement split() or asplit()")
        if content_format is not None:
            self.content_format = ContentFormat.coerce(content_format)

    def split(self, document: Document) -> Iterable[Piece]:
        """Yield the pieces of ``document`` (see :class:`ChunkSpan`, :class:`ChunkText`)."""
        raise NotImplementedError  # pragma: no cover - guarded in __init__

    async def asplit(self, document: Document) -> AsyncIterator[Piece]:
        """Yield pieces asynchronously; override for model-backed chunking.

        The default delegates to :meth:`split`.
        """
        for piece in self.split(document):
            yield piece

    def validate_input(self, item: Document) -> None:
        """Reject non-documents and formats outside :attr:`accepted_content_formats`."""
        if not isinstance(item, Document):
            raise InvalidInputError(str(wrong_item(item, f"a ragloom.Document for {self.name}")))
        accepted = self.accepted_content_formats
        if accepted is not None and item.content_format not in accepted:
            raise InvalidInputError(
                f"{self.name} accepts content formats {sorted(map(str, accepted))}, "
                f"got {str(item.content_format)!r} for document {item.id!r}"
            )

    def _stransform(self, item: Document, context: ExecutionContext) -> list[Document]:
        chunks = self.build_chunks(item, self.split(item))
        if self.lossless:
            check_coverage(self, item, chunks)
        elif not chunks and item.content and not item.content.isspace():
            _note_no_chunks(self, item, context)
        return chunks

    async def _atransform(self, item: Document, context: ExecutionContext) -> list[Document]:
        chunks = self.build_chunks(item, [piece async for piece in self.asplit(item)])
        if self.lossless:
            check_coverage(self, item, chunks)
        elif not chunks and item.content and not item.content.isspace():
            _note_no_chunks(self, item, context)
        return chunks

    @property
    def transform(self) -> Callable[[Document, ExecutionContext], Any]:  # type: ignore[override]
        """The step's work follows the splitting hook the class implements: an async
        :meth:`asplit` makes it await, a sync :meth:`split` runs inline. A subclass may still
        define ``transform`` itself (its method then wins, as any override does)."""
        if type(self).asplit is not Chunker.asplit:
            return self._atransform
        return self._stransform

    # -- synchronous, string-first use ----------------------------------------------------------

    def chunk(self, source: str | Document | Iterable[str | Document]) -> list[Document]:
        """Chunk text or documents right now, synchronously; return every chunk in order.

        ``source`` is a string (it becomes ``Document.from_text(text)``), a :class:`Document`,
        or an iterable of either. Works in scripts and inside a running event loop (notebooks).

        Raises:
            TypeError: an item is neither a string nor a ``Document`` (the message names its
                class and the adapter that converts it).
            InvalidInputError: a document this chunker does not accept (its content format).
        """
        chunks: list[Document] = []
        for document in as_documents(source):
            self.validate_input(document)
            if self.awaits:
                from ._sync import run_sync

                pieces: Iterable[Piece] = run_sync(_collect, self.asplit(document))
            else:
                pieces = self.split(document)
            chunks.extend(self.build_chunks(document, pieces))
        return chunks

    def split_text(self, text: str) -> list[str]:
        """The chunks of ``text`` as strings (exact slices of it, in order)."""
        if not isinstance(text, str):
            raise wrong_item(text, "a str")
        return [chunk.content for chunk in self.chunk(text)]

    def build_chunks(self, parent: Document, pieces: Iterable[Piece]) -> list[Document]:
        """Turn pieces into chunk documents with ids, spans, metadata and format."""
        pieces = pieces if type(pieces) is list else list(pieces)
        if pieces and set(map(type, pieces)) == _ONLY_SPANS:
            # Every piece an exact span (what most chunkers yield): one pass building them all.
            return self.build_chunks_from_spans(parent, map(_span_fields, pieces))
        content = parent.content
        fmt = self.content_format or parent.content_format
        base_meta = parent.metadata
        parent_id = parent.id
        chunks: list[Document] = []
        search_from = 0
        build = construct_document  # every field given, already checked: no validation
        n = len(content)
        for index, piece in enumerate(pieces):
            meta: Mapping[str, Any] | None = None
            start: int | None
            end: int | None
            if type(piece) is ChunkSpan:
                start, end, meta = piece.start, piece.end, piece.metadata
                if not 0 <= start <= end <= n:
                    raise RagloomError(
                        f"{self.name} produced span [{start}, {end}) outside document "
                        f"{parent_id!r} of length {len(content)}"
                    )
                text = content[start:end]
            elif type(piece) is ChunkText:
                text, meta, start, end = piece.text, piece.metadata, None, None
                if not isinstance(text, str):
                    raise ComponentTypeError(
                        f"{self.name} produced ChunkText with {type(text).__name__} text"
                    )
            else:
                if isinstance(piece, tuple):
                    text, meta = piece
                elif isinstance(piece, str):
                    text = piece
                else:
                    raise ComponentTypeError(
                        f"{self.name}.split() yielded {type(piece).__name__}; expected str, "
                        "(str, metadata), ChunkSpan or ChunkText"
                    )
                start = content.find(text, search_from)
                if start < 0:
                    raise RagloomError(
                        f"{self.name} produced a chunk that is not in document {parent_id!r} "
                        f"after offset {search_from}: {text[:60]!r}"
                    )
                end = start + len(text)
            if start is not None:
                search_from = start + 1
            chunks.append(
                build(
                    {
                        "id": f"{parent_id}#{index}",
                        "content": text,
                        "content_format": fmt,
                        "metadata": {**base_meta, **meta} if meta else dict(base_meta),
                        "parent_id": parent_id,
                        "index": index,
                        "start": start,
                        "end": end,
                        "embedding": None,
                    }
                )
            )
        return chunks

    def build_chunks_from_spans(
        self,
        parent: Document,
        spans: Iterable[tuple[int, int, Mapping[str, Any] | None]],
    ) -> list[Document]:
        """Chunk documents for exact spans of ``parent``: ``(start, end, metadata)`` triples,
        ``metadata`` being the piece's own (or ``None``).

        The same chunks :meth:`build_chunks` builds from the equivalent :class:`ChunkSpan`
        pieces (ids, spans, inherited metadata, format), without a piece object per chunk: the
        fast path for chunkers that compute their spans as plain tuples.
        """

        def bad_span(start: int, end: int) -> RagloomError:
            return RagloomError(
                f"{self.name} produced span [{start}, {end}) outside document "
                f"{parent.id!r} of length {len(parent.content)}"
            )

        return construct_chunks(
            parent, self.content_format or parent.content_format, spans, bad_span
        )


class ChunkerRouter(RoutedStep[Document]):
    """Route each document to the first matching ``.route`` chunker, or ``.default``.

    Holds no chunking logic of its own, and does not pretend to: it has no ``split``. It is
    registered as a virtual :class:`Chunker`, so it is accepted wherever a chunker is.

    Example::

        chunker = (
            ChunkerRouter(cache=cache)
            .route(ContentFormatFilter(include_formats=["docling"]), DoclingChunker())
            .default(RecursiveCharacterTextSplitter(chunk_size=500))
        )
    """

    event_name = "Chunking"
    kind = "chunker"
    accepted_content_formats: ClassVar[frozenset[str] | None] = None

    def __init__(
        self,
        *,
        cache: Any = None,
        policy: Policy | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(cache=cache, policy=policy, name=name)

    def _check_child(self, step: object) -> PipelineStep[Document]:
        child = super()._check_child(step)
        if not isinstance(child, Chunker):
            raise ComponentTypeError(
                f"ChunkerRouter routes to chunkers, got {type(child).__name__}"
            )
        return child

    def chunk(self, source: str | Document | Iterable[str | Document]) -> list[Document]:
        """Like :meth:`Chunker.chunk`: each document goes to the chunker it routes to.

        Raises:
            UnroutedItemError: a document matches no route and there is no default.
        """
        chunks: list[Document] = []
        for document in as_documents(source):
            child = self.select(document)
            if child is None:
                raise UnroutedItemError(
                    f"{self.name}: document {document.id!r} matched no route and no default is set"
                )
            assert isinstance(child, Chunker | ChunkerRouter)
            chunks.extend(child.chunk(document))
        return chunks

    def split_text(self, text: str) -> list[str]:
        """The chunks of ``text`` as strings (exact slices of it, in order): the
        ``split_text`` of the chunker ``text`` routes to (which may skip building chunk
        documents, as ragloom-text's chunkers do).

        Raises:
            UnroutedItemError: the text matches no route and there is no default.
        """
        if not isinstance(text, str):
            raise wrong_item(text, "a str")
        document = Document.from_text(text)
        child = self.select(document)
        if child is None:
            raise UnroutedItemError(
                f"{self.name}: document {document.id!r} matched no route and no default is set"
            )
        assert isinstance(child, Chunker | ChunkerRouter)
        return child.split_text(text)

    def route_name(self, document: Document) -> str | None:
        """The name of the chunker that would handle ``document`` (None: unroutable)."""
        child = self.select(document)
        return child.name if child is not None else None


Chunker.register(ChunkerRouter)


def check_coverage(chunker: Chunker, document: Document, chunks: list[Document]) -> None:
    """Raise ``RagloomError`` when ``chunks`` leave part of ``document`` uncovered.

    Overlapping spans are fine; with ``chunker.whitespace_gaps`` a gap of whitespace is too.
    Chunks without a span (rendered text) cover nothing. An empty document needs no chunk.
    """
    content = document.content
    if not content:
        return
    reach = 0
    gap: tuple[int, int] | None = None
    for chunk in sorted(
        (c for c in chunks if c.start is not None), key=lambda c: c.start or 0
    ):
        start, end = chunk.start or 0, chunk.end or 0
        if start > reach and not (chunker.whitespace_gaps and not content[reach:start].strip()):
            gap = (reach, start)
            break
        reach = max(reach, end)
    else:
        if reach < len(content) and not (
            chunker.whitespace_gaps and not content[reach:].strip()
        ):
            gap = (reach, len(content))
    if gap is not None:
        start, end = gap
        raise RagloomError(
            f"{chunker.name} lost text of document {document.id!r}: characters "
            f"[{start}, {end}) ({content[start:end][:40]!r}) are in no chunk; a lossless chunker "
            "must cover the whole document"
        )


def as_documents(source: str | Document | Iterable[str | Document]) -> list[Document]:
    """``source`` (a string, a document, or an iterable of either) as a list of documents.

    Raises:
        TypeError: an item of another type, named in full with the adapter that converts it.
    """
    if isinstance(source, str | Document):
        source = [source]
    elif not isinstance(source, Iterable) or isinstance(source, bytes | dict | BaseModel):
        # A pydantic model (another framework's document) iterates over its fields: it is one
        # wrong item, not a batch.
        raise wrong_item(source, "a str, a ragloom.Document, or an iterable of them")
    documents: list[Document] = []
    for item in source:
        if isinstance(item, Document):
            documents.append(item)
        elif isinstance(item, str):
            documents.append(Document.from_text(item))
        else:
            raise wrong_item(item, "a str or a ragloom.Document")
    return documents


async def _collect(pieces: AsyncIterator[Piece]) -> list[Piece]:
    return [piece async for piece in pieces]
