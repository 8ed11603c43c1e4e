"""``DoclingChunker``: ragloom's chunker for serialized Docling documents."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ragloom import (
    Chunker,
    ChunkText,
    ConfigurationError,
    ContentFormat,
    Document,
    InvalidInputError,
    Policy,
)

from ._options import DoclingInputError, DoclingOptions, DoclingOptionsError
from ._tokenizer import load_tokenizer

if TYPE_CHECKING:
    from ._engine import DoclingEngine

__all__ = ["DoclingChunker"]


class DoclingChunker(Chunker):
    """Chunk documents whose content is a serialized ``DoclingDocument`` (format ``"docling"``).

    Uses docling-core's ``HierarchicalChunker`` (one chunk per document element: a paragraph, a
    whole list, a table with its caption), or, with ``max_tokens`` and ``tokenizer_path``, its
    ``HybridChunker`` (elements merged and split to fit ``max_tokens`` counted by a local
    HuggingFace ``tokenizer.json``; nothing is downloaded). Chunks are Markdown: tables are
    Markdown tables and, with ``contextualize`` (the default), the chunk starts with its heading
    path as Markdown headings, the text an embedding model should see.

    A chunk's text is not a slice of the parent's JSON, so it has ``start``/``end`` ``None``;
    ``metadata["doc_items"]`` lists the refs (``"#/texts/12"``) of the items it was made from and
    ``metadata["span_kind"]`` is ``"docling-items"``. Metadata also holds ``"headings"`` (the
    heading path), ``"pages"`` (sorted page numbers, when the items have provenance),
    ``"captions"`` (of its tables and pictures), and in the token-limited mode ``"tokens"``,
    ``"partial_items"`` (elements split across chunks) and ``"oversized"``.

    Content that is not JSON, not a DoclingDocument, or a document with no body text raises
    :class:`ragloom.InvalidInputError` naming the reason; an empty content string yields no
    chunks. docling-core is imported when the chunker first chunks.
    """

    step_id: ClassVar[str] = "ragloom-docling/docling"
    accepted_content_formats: ClassVar[frozenset[str] | None] = frozenset({"docling"})
    content_format: str | None = ContentFormat.MARKDOWN

    def __init__(
        self,
        *,
        contextualize: bool = True,
        max_tokens: int | None = None,
        tokenizer_path: str | None = None,
        merge_peers: bool = True,
        repeat_table_header: bool = True,
        cache: Any = None,
        policy: Policy | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(cache=cache, policy=policy, name=name)
        try:
            self.options = DoclingOptions(
                contextualize=contextualize,
                max_tokens=max_tokens,
                tokenizer_path=tokenizer_path,
                merge_peers=merge_peers,
                repeat_table_header=repeat_table_header,
            )
            # Load the tokenizer now (cheap, no docling-core) so a bad file fails the build.
            self._tokenizer = load_tokenizer(tokenizer_path) if tokenizer_path else None
        except DoclingOptionsError as exc:
            raise ConfigurationError(str(exc)) from exc
        self._engine: DoclingEngine | None = None

    def config(self) -> Mapping[str, Any]:
        options = self.options
        config: dict[str, Any] = {"contextualize": options.contextualize}
        if options.hybrid:
            config.update(
                max_tokens=options.max_tokens,
                tokenizer_path=options.tokenizer_path,
                merge_peers=options.merge_peers,
                repeat_table_header=options.repeat_table_header,
            )
        return config

    @property
    def engine(self) -> DoclingEngine:
        """The docling-core engine, built (and docling-core imported) on first use."""
        if self._engine is None:
            from ._engine import DoclingEngine

            self._engine = DoclingEngine(self.options, tokenizer=self._tokenizer)
        return self._engine

    def split(self, document: Document) -> Iterator[ChunkText]:
        if not document.content.strip():
            return
        try:
            pieces = self.engine.split_json(document.content)
        except DoclingInputError as exc:
            raise InvalidInputError(f"document {document.id!r}: {exc}") from exc
        for piece in pieces:
            yield ChunkText(piece.text, piece.metadata)
