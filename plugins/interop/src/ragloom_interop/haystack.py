"""Haystack: conversions to and from Haystack ``Document``, and :class:`RagloomDocumentSplitter`.

Lineage follows Haystack's own ``DocumentSplitter``: a chunk's ``meta["source_id"]`` is the id
of the document it was cut from, ``meta["split_id"]`` its position, ``meta["split_idx_start"]``
its exact start in the source text, ``meta["page_number"]`` the page it starts on (counting
form feeds), and with overlap ``meta["_split_overlap"]`` the ranges shared with its neighbours.
Haystack's ``SentenceWindowRetriever`` reads exactly these fields. The content format is
``meta["content_format"]`` when the ``mime_type`` or ``file_path`` suffix does not already tell it
(plain text when there are none).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, overload

from ragloom import Chunker
from ragloom import Document as RagloomDocument

from ragloom_interop._chunking import BoundChunker, Cut
from ragloom_interop._common import (
    CONTENT_FORMAT_KEY,
    content_format_of,
    format_key_needed,
    is_batch,
    mime_of_path,
    missing_framework,
    take_format,
    wrong_type,
)

try:
    from haystack import Document as HaystackDocument
    from haystack import component, default_from_dict, default_to_dict
    from haystack.core.errors import SerializationError
    from haystack.dataclasses import SparseEmbedding
except ImportError as exc:  # pragma: no cover - exercised by blocking the import
    raise missing_framework("haystack", exc) from exc

__all__ = ["RagloomDocumentSplitter", "from_haystack", "to_haystack"]

SOURCE_KEY = "source_id"
SPLIT_KEY = "split_id"
START_KEY = "split_idx_start"
PAGE_KEY = "page_number"
OVERLAP_KEY = "_split_overlap"
SCORE_KEY = "score"
SPARSE_KEY = "sparse_embedding"

_HAYSTACK_CLASS = "a haystack.dataclasses.document.Document"
_TO_HAYSTACK = {
    "haystack": "it is already a Haystack document",
    "ragloom": "convert it with ragloom_interop.haystack.to_haystack()",
    "langchain_core": "convert it with ragloom_interop.langchain.from_langchain(), then "
    "ragloom_interop.haystack.to_haystack()",
    "llama_index": "convert it with ragloom_interop.llama_index.from_llama_index(), then "
    "ragloom_interop.haystack.to_haystack()",
}
_TO_RAGLOOM = {
    "haystack": "it is already a Haystack document",
    "langchain_core": "convert it with ragloom_interop.langchain.from_langchain()",
    "llama_index": "convert it with ragloom_interop.llama_index.from_llama_index()",
}


# -- conversions --------------------------------------------------------------------------------


@overload
def to_haystack(documents: RagloomDocument) -> HaystackDocument: ...
@overload
def to_haystack(documents: Iterable[RagloomDocument]) -> list[HaystackDocument]: ...
def to_haystack(
    documents: RagloomDocument | Iterable[RagloomDocument],
) -> HaystackDocument | list[HaystackDocument]:
    """Ragloom documents as Haystack ``Document`` objects (id, text, meta, embedding kept;
    lineage in Haystack's split fields). Raises ``TypeError`` for anything else."""
    if isinstance(documents, RagloomDocument):
        return _to_haystack(documents)
    if not is_batch(documents):
        raise wrong_type(documents, "a ragloom.Document or an iterable of them", _TO_HAYSTACK)
    return [_to_haystack(d) for d in documents]


def _to_haystack(document: object) -> HaystackDocument:
    if not isinstance(document, RagloomDocument):
        raise wrong_type(document, "a ragloom.Document", _TO_HAYSTACK)
    meta = dict(document.metadata)
    if format_key_needed(
        document.content_format, meta.get("mime_type"), mime_of_path(meta.get("file_path"))
    ):
        meta[CONTENT_FORMAT_KEY] = str(document.content_format)
    if document.parent_id is not None:
        meta[SOURCE_KEY] = document.parent_id
        if document.index is not None:
            meta[SPLIT_KEY] = document.index
        if document.start is not None:
            meta[START_KEY] = document.start
    score = meta.pop(SCORE_KEY, None)
    sparse = meta.pop(SPARSE_KEY, None)
    extra: dict[str, Any] = {}
    if isinstance(score, int | float) and not isinstance(score, bool):
        extra["score"] = float(score)
    elif score is not None:
        meta[SCORE_KEY] = score
    if isinstance(sparse, Mapping) and {"indices", "values"} <= set(sparse):
        extra["sparse_embedding"] = SparseEmbedding.from_dict(dict(sparse))
    elif sparse is not None:
        meta[SPARSE_KEY] = sparse
    return HaystackDocument(
        id=document.id,
        content=document.content,
        meta=meta,
        embedding=list(document.embedding) if document.embedding is not None else None,
        **extra,
    )


@overload
def from_haystack(documents: HaystackDocument) -> RagloomDocument: ...
@overload
def from_haystack(documents: Iterable[HaystackDocument]) -> list[RagloomDocument]: ...
def from_haystack(
    documents: HaystackDocument | Iterable[HaystackDocument],
) -> RagloomDocument | list[RagloomDocument]:
    """Haystack documents as ragloom documents.

    ``source_id``, ``split_id`` and ``split_idx_start`` become the parent, index and span;
    ``score`` and ``sparse_embedding`` go to the metadata. A document without text, or with
    binary data (``blob``) a ragloom document cannot carry, raises ``ValueError``; anything but
    a Haystack document raises ``TypeError``.
    """
    if isinstance(documents, HaystackDocument):
        return _from_haystack(documents)
    if not is_batch(documents):
        raise wrong_type(documents, f"{_HAYSTACK_CLASS} or an iterable of them", _TO_RAGLOOM)
    return [_from_haystack(d) for d in documents]


def _from_haystack(document: object) -> RagloomDocument:
    if not isinstance(document, HaystackDocument):
        raise wrong_type(document, _HAYSTACK_CLASS, _TO_RAGLOOM)
    if document.content is None:
        raise ValueError(f"Haystack document {document.id!r} has no text content to convert")
    if document.blob is not None:
        raise ValueError(
            f"Haystack document {document.id!r} carries binary data (blob), which a ragloom "
            "Document cannot hold; drop it first: dataclasses.replace(document, blob=None)"
        )
    meta = dict(document.meta)
    content_format = take_format(meta, meta.get("mime_type"), mime_of_path(meta.get("file_path")))
    fields: dict[str, Any] = {}
    source = meta.get(SOURCE_KEY)
    if isinstance(source, str) and source:
        fields["parent_id"] = meta.pop(SOURCE_KEY)
        split = meta.get(SPLIT_KEY)
        if _is_int(split) and split >= 0:
            fields["index"] = meta.pop(SPLIT_KEY)
        start = meta.get(START_KEY)
        if _is_int(start) and start >= 0:
            fields["start"] = meta.pop(START_KEY)
            fields["end"] = start + len(document.content)
    if document.score is not None:
        meta[SCORE_KEY] = document.score
    if document.sparse_embedding is not None:
        meta[SPARSE_KEY] = document.sparse_embedding.to_dict()
    if document.embedding is not None:
        fields["embedding"] = list(document.embedding)
    return RagloomDocument(
        id=document.id,
        content=document.content,
        content_format=content_format,
        metadata=meta,
        **fields,
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- the splitter component ---------------------------------------------------------------------


@component
class RagloomDocumentSplitter:
    """A Haystack component that splits documents with a ragloom chunker.

    ``chunker`` is a registered ragloom chunker name built with ``chunk_size``,
    ``chunk_overlap`` and any other ``params`` it takes, a step spec (the mapping a pipeline
    file's step holds), or a ready ``ragloom.Chunker`` whose class is registered (so the
    pipeline can be saved). Output documents carry the metadata Haystack's ``DocumentSplitter``
    gives (see the module docstring) over a copy of their source's, plus what the chunker adds
    (``headings``, ``oversized``); ``split_idx_start`` is where the chunker cut. A document's
    format (``meta["content_format"]``, else its ``mime_type`` or ``file_path`` suffix) chooses
    a route of the ``"auto"`` chunker. A document with empty text gives no chunks.

    In a pipeline file the chunker is written as its step spec::

        splitter:
          type: ragloom_interop.haystack.RagloomDocumentSplitter
          init_parameters:
            chunker: {chunker: recursive, params: {chunk_size: 512, chunk_overlap: 64}}
    """

    def __init__(
        self,
        chunker: str | Mapping[str, Any] | Chunker = "recursive",
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        **params: Any,
    ) -> None:
        self._bound = BoundChunker.resolve(
            chunker,
            {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap, **params},
            owner="RagloomDocumentSplitter",
        )
        overlap = self._bound.attribute("chunk_overlap")
        self._overlap = isinstance(overlap, int) and overlap > 0

    @property
    def chunker(self) -> Chunker:
        """The ragloom chunker doing the cutting."""
        return self._bound.chunker

    def to_dict(self) -> dict[str, Any]:
        """Serialise the component (its chunker as a step spec)."""
        if self._bound.spec is None:
            raise SerializationError(
                f"RagloomDocumentSplitter cannot serialise its {type(self.chunker).__name__}: "
                "the class is registered under no ragloom.chunkers entry point; register it, "
                "or build the splitter from a registered name"
            )
        return default_to_dict(self, chunker=copy.deepcopy(self._bound.spec))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RagloomDocumentSplitter:
        """Rebuild the component from :meth:`to_dict`'s output."""
        return default_from_dict(cls, data)

    @component.output_types(documents=list[HaystackDocument])
    def run(self, documents: list[HaystackDocument]) -> dict[str, list[HaystackDocument]]:
        """Split ``documents`` into chunk documents, in order.

        :raises TypeError: ``documents`` is not a list of Haystack documents (the message names
            the class given and the adapter that converts it).
        :raises ValueError: a document has no text content.
        """
        if not isinstance(documents, list):
            raise wrong_type(documents, f"a list of {_HAYSTACK_CLASS}", _TO_HAYSTACK)
        for document in documents:
            if not isinstance(document, HaystackDocument):
                raise wrong_type(document, _HAYSTACK_CLASS, _TO_HAYSTACK)
            if document.content is None:
                raise ValueError(
                    "RagloomDocumentSplitter splits text documents, but document "
                    f"{document.id!r} has no content"
                )
        out: list[HaystackDocument] = []
        for document in documents:
            out.extend(self._split(document))
        return {"documents": out}

    def _split(self, document: HaystackDocument) -> list[HaystackDocument]:
        text = document.content or ""
        meta = document.meta
        source = RagloomDocument.model_construct(
            id=document.id,
            content=text,
            content_format=content_format_of(
                meta, meta.get("mime_type"), mime_of_path(meta.get("file_path"))
            ),
            metadata=meta,
            parent_id=None,
        )
        cuts = self._bound.cuts(source)
        pages = _PageCounter(text)
        chunks: list[HaystackDocument] = []
        for i, cut in enumerate(cuts):
            chunk_meta = copy.deepcopy(meta)
            if cut.metadata:
                chunk_meta.update(copy.deepcopy(dict(cut.metadata)))
            chunk_meta[SOURCE_KEY] = document.id
            if cut.start is not None:
                chunk_meta[PAGE_KEY] = pages.page_of(cut.start, cut.text)
            chunk_meta[SPLIT_KEY] = i
            if cut.start is not None:
                chunk_meta[START_KEY] = cut.start
            chunks.append(HaystackDocument(content=cut.text, meta=chunk_meta))
        if self._overlap:
            _add_overlaps(chunks, cuts)
        return chunks


class _PageCounter:
    """The page (1-based, counting form feeds) a chunk starts on, as Haystack reports it: the
    page of its first character that is not a page break (its own page if it is all breaks)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.breaks = 0

    def page_of(self, start: int, chunk: str) -> int:
        if start < self.pos:  # spans go forward; restart if one does not
            self.pos, self.breaks = 0, 0
        self.breaks += self.text.count("\f", self.pos, start)
        self.pos = start
        leading = len(chunk) - len(chunk.lstrip("\f"))
        return 1 + self.breaks + (leading if leading < len(chunk) else 0)


def _add_overlaps(chunks: list[HaystackDocument], cuts: list[Cut]) -> None:
    """Haystack's ``_split_overlap``: for each pair of neighbours that share text, the range of
    the shared text in the other document, recorded on both."""
    for chunk in chunks:
        chunk.meta[OVERLAP_KEY] = []
    for i in range(1, len(chunks)):
        before, after = cuts[i - 1], cuts[i]
        if before.start is None or after.start is None or before.end is None:
            continue
        if after.start < before.end:
            shared = before.end - after.start
            chunks[i].meta[OVERLAP_KEY].append(
                {
                    "doc_id": chunks[i - 1].id,
                    "range": (after.start - before.start, len(before.text)),
                }
            )
            chunks[i - 1].meta[OVERLAP_KEY].append({"doc_id": chunks[i].id, "range": (0, shared)})
