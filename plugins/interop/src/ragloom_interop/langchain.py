"""LangChain: document conversions and :class:`RagloomTextSplitter`, a real ``TextSplitter``.

Offsets follow LangChain's convention: a chunk's start in its source text is
``metadata["start_index"]``. A ragloom document converted with :func:`to_langchain` also
carries its lineage in flat metadata (vector stores accept only flat values):
``parent_id``, ``chunk_index``, ``start_index``, and ``content_format`` unless it is plain text
(plus ``embedding`` when it has one). :func:`from_langchain` reads them back, so the round trip
is exact.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, overload

from ragloom import Chunker, Document

from ragloom_interop._chunking import BoundChunker
from ragloom_interop._common import (
    CONTENT_FORMAT_KEY,
    content_format_of,
    derive_id,
    format_key_needed,
    is_batch,
    missing_framework,
    take_format,
    wrong_type,
)

try:
    from langchain_core.documents import Document as LCDocument
    from langchain_text_splitters import TextSplitter
except ImportError as exc:  # pragma: no cover - exercised by blocking the import
    raise missing_framework("langchain", exc) from exc

__all__ = ["RagloomTextSplitter", "from_langchain", "to_langchain"]

START_KEY = "start_index"
PARENT_KEY = "parent_id"
INDEX_KEY = "chunk_index"
EMBEDDING_KEY = "embedding"

_LC_CLASS = "a langchain_core.documents.Document"
_TO_LANGCHAIN = {
    "langchain_core": "it is already a LangChain document",
    "ragloom": "convert it with ragloom_interop.langchain.to_langchain()",
    "llama_index": "convert it with ragloom_interop.llama_index.from_llama_index(), then "
    "ragloom_interop.langchain.to_langchain()",
    "haystack": "convert it with ragloom_interop.haystack.from_haystack(), then "
    "ragloom_interop.langchain.to_langchain()",
}
_TO_RAGLOOM = {
    "langchain_core": "it is already a LangChain document",
    "llama_index": "convert it with ragloom_interop.llama_index.from_llama_index()",
    "haystack": "convert it with ragloom_interop.haystack.from_haystack()",
}


# -- conversions --------------------------------------------------------------------------------


@overload
def to_langchain(documents: Document) -> LCDocument: ...
@overload
def to_langchain(documents: Iterable[Document]) -> list[LCDocument]: ...
def to_langchain(documents: Document | Iterable[Document]) -> LCDocument | list[LCDocument]:
    """A ragloom document (or an iterable of them) as LangChain ``Document`` objects.

    The id, text and metadata are kept; lineage goes into flat metadata keys (see the module
    docstring). Raises ``TypeError`` for anything but ragloom documents.
    """
    if isinstance(documents, Document):
        return _to_langchain(documents)
    if not is_batch(documents):
        raise wrong_type(documents, "a ragloom.Document or an iterable of them", _TO_LANGCHAIN)
    return [_to_langchain(d) for d in documents]


def _to_langchain(document: object) -> LCDocument:
    if not isinstance(document, Document):
        raise wrong_type(document, "a ragloom.Document", _TO_LANGCHAIN)
    metadata = dict(document.metadata)
    if format_key_needed(document.content_format):
        metadata[CONTENT_FORMAT_KEY] = str(document.content_format)
    if document.parent_id is not None:
        metadata[PARENT_KEY] = document.parent_id
        if document.index is not None:
            metadata[INDEX_KEY] = document.index
        if document.start is not None:
            metadata[START_KEY] = document.start
    if document.embedding is not None:
        metadata[EMBEDDING_KEY] = list(document.embedding)
    return LCDocument(page_content=document.content, metadata=metadata, id=document.id)


@overload
def from_langchain(documents: LCDocument) -> Document: ...
@overload
def from_langchain(documents: Iterable[LCDocument]) -> list[Document]: ...
def from_langchain(documents: LCDocument | Iterable[LCDocument]) -> Document | list[Document]:
    """A LangChain ``Document`` (or an iterable of them) as ragloom documents.

    A document without an id gets one derived from its text and metadata. ``start_index`` is
    read as the chunk's start only together with ``parent_id`` (ragloom spans are relative to
    a named parent); otherwise it stays in the metadata. Raises ``TypeError`` for anything but
    LangChain documents.
    """
    if isinstance(documents, LCDocument):
        return _from_langchain(documents)
    if not is_batch(documents):
        raise wrong_type(documents, f"{_LC_CLASS} or an iterable of them", _TO_RAGLOOM)
    return [_from_langchain(d) for d in documents]


def _from_langchain(document: object) -> Document:
    if not isinstance(document, LCDocument):
        raise wrong_type(document, _LC_CLASS, _TO_RAGLOOM)
    metadata = dict(document.metadata)
    content_format = take_format(metadata)
    fields: dict[str, Any] = {}
    parent_id = metadata.get(PARENT_KEY)
    if isinstance(parent_id, str) and parent_id:
        fields["parent_id"] = metadata.pop(PARENT_KEY)
        index = metadata.get(INDEX_KEY)
        if _is_int(index) and index >= 0:
            fields["index"] = metadata.pop(INDEX_KEY)
        start = metadata.get(START_KEY)
        if _is_int(start) and start >= 0:
            fields["start"] = metadata.pop(START_KEY)
            fields["end"] = start + len(document.page_content)
    embedding = metadata.get(EMBEDDING_KEY)
    if isinstance(embedding, list) and all(_is_number(v) for v in embedding):
        fields["embedding"] = [float(v) for v in metadata.pop(EMBEDDING_KEY)]
    return Document(
        id=document.id or derive_id(document.page_content, metadata),
        content=document.page_content,
        content_format=content_format,
        metadata=metadata,
        **fields,
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- the splitter -------------------------------------------------------------------------------

# LangChain options that would make chunks stop being exact slices of the text.
_INEXACT = {
    "keep_separator": "ragloom chunks always keep their separators (they are exact slices)",
    "strip_whitespace": "ragloom chunks are exact slices of the text and are never stripped",
}


class RagloomTextSplitter(TextSplitter):
    """A LangChain ``TextSplitter`` that cuts with a ragloom chunker.

    ``chunker`` is a registered ragloom chunker name (``"recursive"``, ``"markdown"``,
    ``"sentence"``, ``"code"``, ``"auto"``, or a qualified ``"dist:name"``) built with
    ``chunk_size``, ``chunk_overlap`` and any other ``params`` it takes; or a ready
    ``ragloom.Chunker`` (then give no parameters). ``split_text``, ``create_documents``,
    ``split_documents`` and ``transform_documents`` work as LangChain's own splitters do, except
    that every chunk is an exact slice of its text: with ``add_start_index=True`` each chunk's
    ``metadata["start_index"]`` is where the chunker cut it, never a search for its text.
    Metadata a chunker gives a chunk (``headings``, ``oversized``) is added to the copy of the
    source's metadata. Documents choose a route of the ``"auto"`` chunker through
    ``metadata["content_format"]`` (plain text without it).

    Example::

        splitter = RagloomTextSplitter("recursive", chunk_size=512, chunk_overlap=64)
        chunks = splitter.split_documents(docs)
    """

    def __init__(
        self,
        chunker: str | Mapping[str, Any] | Chunker = "recursive",
        *,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        add_start_index: bool = False,
        **params: Any,
    ) -> None:
        for name, why in _INEXACT.items():
            if name in params:
                raise ValueError(f"RagloomTextSplitter does not take {name}: {why}")
        self._bound = BoundChunker.resolve(
            chunker,
            {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap, **params},
            owner="RagloomTextSplitter",
        )
        size = self._bound.attribute("chunk_size")
        overlap = self._bound.attribute("chunk_overlap")
        length = self._bound.attribute("length")
        super().__init__(
            chunk_size=size if isinstance(size, int) and size > 0 else 4000,
            chunk_overlap=overlap if isinstance(overlap, int) and overlap >= 0 else 0,
            length_function=length if callable(length) else len,
            keep_separator=True,
            add_start_index=add_start_index,
            strip_whitespace=False,
        )

    @property
    def chunker(self) -> Chunker:
        """The ragloom chunker doing the cutting."""
        return self._bound.chunker

    def split_text(self, text: str) -> list[str]:
        """The chunks of ``text``, exact slices of it in order (the chunker's fast path)."""
        if not isinstance(text, str):
            raise wrong_type(text, "a str", _TO_RAGLOOM)
        return self._bound.split_text(text)

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[LCDocument]:
        """Split each text into LangChain documents, with a deep copy of its metadata each."""
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise wrong_type(texts, "a list of str", _TO_RAGLOOM)
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(
                f"create_documents got {len(texts)} texts but {len(metadatas)} metadatas"
            )
        out: list[LCDocument] = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise wrong_type(text, f"a str (texts[{i}])", _TO_RAGLOOM)
            out.extend(self._split(text, metadatas[i] if metadatas else {}, f"text-{i}"))
        return out

    def split_documents(self, documents: Iterable[LCDocument]) -> list[LCDocument]:
        """Split LangChain documents; each chunk keeps a deep copy of its source's metadata."""
        if not is_batch(documents):
            raise wrong_type(documents, f"an iterable of {_LC_CLASS}", _TO_LANGCHAIN)
        out: list[LCDocument] = []
        for i, document in enumerate(documents):
            if not isinstance(document, LCDocument):
                raise wrong_type(document, _LC_CLASS, _TO_LANGCHAIN)
            key = document.id or f"document-{i}"
            out.extend(self._split(document.page_content, document.metadata, key))
        return out

    def _split(self, text: str, metadata: dict[Any, Any], key: str) -> list[LCDocument]:
        source = Document.model_construct(
            id=key,
            content=text,
            content_format=content_format_of(metadata),
            metadata=metadata,
            parent_id=None,
        )
        out: list[LCDocument] = []
        add_start = self._add_start_index
        for cut in self._bound.cuts(source):
            meta = copy.deepcopy(metadata)
            if cut.metadata:
                meta.update(copy.deepcopy(dict(cut.metadata)))
            if add_start and cut.start is not None:
                meta[START_KEY] = cut.start
            out.append(LCDocument(page_content=cut.text, metadata=meta))
        return out
