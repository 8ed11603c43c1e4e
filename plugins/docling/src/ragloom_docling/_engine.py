"""Chunk a serialized DoclingDocument with docling-core, as plain data.

This module imports docling-core at import time; :mod:`ragloom_docling` imports it only when a
chunker is first used, so listing plugins stays cheap. It needs nothing from ragloom's core.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from docling_core.transforms.chunker.base import BaseChunk
from docling_core.transforms.chunker.doc_chunk import DocChunk
from docling_core.transforms.chunker.hierarchical_chunker import (
    ChunkingDocSerializer,
    ChunkingSerializerProvider,
    HierarchicalChunker,
)
from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
from docling_core.transforms.chunker.tokenizer.base import BaseTokenizer
from docling_core.transforms.serializer.base import BaseDocSerializer
from docling_core.transforms.serializer.markdown import MarkdownParams, MarkdownTableSerializer
from docling_core.types.doc.document import DoclingDocument
from pydantic import ConfigDict, ValidationError

from ._markdown import render_content
from ._options import SPAN_KIND, DoclingInputError, DoclingOptions
from ._tokenizer import count_tokens, load_tokenizer

__all__ = ["DoclingEngine", "DoclingPiece", "LocalTokenizer", "parse_document"]

# docling-core failures on a document that validated but is internally inconsistent.
_DOCLING_DOCUMENT_ERRORS = (LookupError, AttributeError, TypeError, ValueError)


@dataclass(frozen=True, slots=True)
class DoclingPiece:
    """One chunk of a Docling document: its Markdown content and what it was made from."""

    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


def parse_document(content: str) -> DoclingDocument:
    """Parse a serialized DoclingDocument, raising :class:`DoclingInputError` with the reason."""
    try:
        return DoclingDocument.model_validate_json(content)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        if first["type"] == "json_invalid":
            raise DoclingInputError(f"content is not valid JSON: {first['msg']}") from exc
        where = ".".join(str(part) for part in first["loc"]) or "document"
        raise DoclingInputError(
            f"content is not a serialized DoclingDocument: {len(errors)} validation error(s), "
            f"first at {where}: {first['msg']}"
        ) from exc
    except _DOCLING_DOCUMENT_ERRORS as exc:
        # docling-core's tree validator resolves every reference and lets IndexError through.
        raise DoclingInputError(
            "content is not a consistent DoclingDocument: "
            f"{_describe_inconsistency(json.loads(content), exc)}"
        ) from exc


def _describe_inconsistency(data: Any, exc: Exception) -> str:
    """Name the first reference that points to no item (only computed on the failure path)."""
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not _resolves(data, ref):
                return f"reference {ref!r} points to no item"
            stack.extend(reversed(list(node.values())))
    return f"{type(exc).__name__}: {exc}"


def _resolves(data: Any, ref: str) -> bool:
    parts = ref.split("/")
    if parts[0] != "#" or len(parts) not in (2, 3):
        return False
    target = data.get(parts[1])
    if len(parts) == 2:
        return isinstance(target, dict)
    return isinstance(target, list) and parts[2].isdigit() and int(parts[2]) < len(target)


class _MarkdownSerializerProvider(ChunkingSerializerProvider):
    """docling-core's chunking serializer, with tables as compact Markdown instead of triplets."""

    def get_serializer(self, doc: DoclingDocument) -> BaseDocSerializer:
        # One construction per document: building a serializer revalidates the whole document.
        return ChunkingDocSerializer(
            doc=doc, table_serializer=MarkdownTableSerializer(), params=_CHUNKING_PARAMS
        )


_CHUNKING_PARAMS: MarkdownParams = ChunkingDocSerializer.model_fields["params"].default.model_copy(
    update={"compact_tables": True}
)


class LocalTokenizer(BaseTokenizer):
    """A docling-core tokenizer over a ``tokenizers.Tokenizer`` (see :mod:`._tokenizer`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tokenizer: Any
    max_tokens: int

    def count_tokens(self, text: str) -> int:
        return count_tokens(self.tokenizer, text)

    def get_max_tokens(self) -> int:
        return self.max_tokens

    def get_tokenizer(self) -> Any:
        # semchunk counts with ``encode(text, add_special_tokens=False)`` and reads the vocab.
        return self.tokenizer


class _MarkdownHybridChunker(HybridChunker):
    """``HybridChunker`` whose token limit applies to the content ragloom emits."""

    markdown_context: bool = True

    def contextualize(self, chunk: BaseChunk) -> str:
        headings = chunk.meta.headings if isinstance(chunk, DocChunk) else None
        return render_content(headings or (), chunk.text, contextualize=self.markdown_context)


class DoclingEngine:
    """Chunk DoclingDocuments with docling-core into :class:`DoclingPiece` objects."""

    def __init__(self, options: DoclingOptions, *, tokenizer: Any = None) -> None:
        """``tokenizer``: an already loaded ``tokenizers.Tokenizer`` for the hybrid mode (else
        ``options.tokenizer_path`` is loaded)."""
        self.options = options
        self._tokenizer: LocalTokenizer | None = None
        self._chunker: HierarchicalChunker | _MarkdownHybridChunker
        provider = _MarkdownSerializerProvider()
        if options.max_tokens is not None and options.tokenizer_path is not None:
            if tokenizer is None:
                tokenizer = load_tokenizer(options.tokenizer_path)
            self._tokenizer = LocalTokenizer(tokenizer=tokenizer, max_tokens=options.max_tokens)
            self._chunker = _MarkdownHybridChunker(
                tokenizer=self._tokenizer,
                serializer_provider=provider,
                merge_peers=options.merge_peers,
                repeat_table_header=options.repeat_table_header,
                markdown_context=options.contextualize,
                delim="\n\n",  # merged elements stay separate Markdown blocks
            )
        else:
            self._chunker = HierarchicalChunker(serializer_provider=provider)

    def split_json(self, content: str) -> list[DoclingPiece]:
        """Parse ``content`` (a serialized DoclingDocument) and chunk it."""
        return self.split_document(parse_document(content))

    def split_document(self, document: DoclingDocument) -> list[DoclingPiece]:
        """Chunk a parsed document; one that yields no text is a :class:`DoclingInputError`."""
        try:
            chunks = [
                chunk
                for chunk in self._chunker.chunk(document)
                if isinstance(chunk, DocChunk) and chunk.text.strip()
            ]
            pieces = list(self._pieces(document, chunks))
        except _DOCLING_DOCUMENT_ERRORS as exc:
            data = document.model_dump(mode="json", by_alias=True)
            raise DoclingInputError(
                f"docling-core could not chunk DoclingDocument {document.name!r}: "
                f"{_describe_inconsistency(data, exc)}"
            ) from exc
        if not pieces:
            raise DoclingInputError(
                f"DoclingDocument {document.name!r} has no body text to chunk "
                f"({len(document.texts)} text item(s), {len(document.tables)} table(s); "
                "headings, page furniture and empty items are not chunked)"
            )
        return pieces

    def _pieces(
        self, document: DoclingDocument, chunks: Sequence[DocChunk]
    ) -> Iterator[DoclingPiece]:
        # An element split across chunks (hybrid mode) is "partial" in each chunk holding it.
        ref_counts = Counter(item.self_ref for chunk in chunks for item in chunk.meta.doc_items)
        for chunk in chunks:
            headings = list(chunk.meta.headings or ())
            content = render_content(headings, chunk.text, contextualize=self.options.contextualize)
            items = chunk.meta.doc_items
            metadata: dict[str, Any] = {
                "headings": headings,
                "doc_items": [item.self_ref for item in items],
                "span_kind": SPAN_KIND,
            }
            pages = sorted({prov.page_no for item in items for prov in item.prov})
            if pages:
                metadata["pages"] = pages
            captions = [
                text
                for item in items
                for ref in getattr(item, "captions", ())
                if (text := getattr(ref.resolve(document), "text", ""))
            ]
            if captions:
                metadata["captions"] = captions
            partial = [item.self_ref for item in items if ref_counts[item.self_ref] > 1]
            if partial:
                metadata["partial_items"] = partial
            if self._tokenizer is not None:
                tokens = self._tokenizer.count_tokens(content)
                metadata["tokens"] = tokens
                if tokens > self._tokenizer.max_tokens:
                    metadata["oversized"] = True
            yield DoclingPiece(text=content, metadata=metadata)
