"""The rows of the chunks table: its schema, and chunks turned into rows (checked first), the
same wherever they are built: in :meth:`LanceDBStore.write <ragloom_lancedb.LanceDBStore.write>`
or by a part writer where the pipeline runs (:mod:`._parts`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ragloom.errors import InvalidInputError
from ragloom.models import Document
from ragloom.search_text import search_text
from ragloom.stores import StoreError

from ._where import metadata_tokens

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["CHUNK_COLUMNS", "FORMAT", "FORMAT_KEY", "FORMAT_PREFIX", "chunk_rows", "chunk_schema"]

#: Written into both tables' schema metadata; a table without it was not made by this store.
FORMAT_KEY = b"ragloom.store"
#: 2: chunks carry ``search_text`` (title and heading path, then the text), which full-text
#: search reads.
FORMAT = b"ragloom-lancedb/2"
FORMAT_PREFIX = b"ragloom-lancedb/"

CHUNK_COLUMNS = (
    "id", "document_id", "parent_id", "chunk_index", "span_start", "span_end", "content",
    "content_format", "metadata", "where_tokens", "search_text", "vector",
)


def chunk_schema(dimension: int) -> pa.Schema:
    """The chunks table's schema, with vectors of ``dimension`` float32 numbers."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("document_id", pa.string(), nullable=False),
            pa.field("parent_id", pa.string()),
            pa.field("chunk_index", pa.int64()),
            pa.field("span_start", pa.int64()),
            pa.field("span_end", pa.int64()),
            pa.field("content", pa.string(), nullable=False),
            pa.field("content_format", pa.string(), nullable=False),
            pa.field("metadata", pa.string(), nullable=False),
            pa.field("where_tokens", pa.list_(pa.string())),
            pa.field("search_text", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dimension)),
        ],
        metadata={FORMAT_KEY: FORMAT},
    )


def chunk_rows(
    documents: Iterable[tuple[str, Sequence[Any]]], dimension: int | None, location: str
) -> tuple[list[str], list[int], pa.Table | None, int | None]:
    """Check the chunks of each ``(document id, chunks)`` and build their rows: (document
    ids, chunk counts, the rows or ``None`` when there is no chunk, the vector dimension).
    ``dimension`` is the table's (``None``: none yet; the first vector sets it).

    Raises:
        InvalidInputError: an empty document id, one document twice, a chunk that is not a
            ``Document``, has no embedding or metadata that is not JSON, empty embeddings.
        StoreError: a vector of another dimension (naming the store at ``location``).
    """
    import numpy as np

    ids: list[str] = []
    counts: list[int] = []
    seen: set[str] = set()
    columns: dict[str, list[Any]] = {c: [] for c in CHUNK_COLUMNS if c != "vector"}
    tokens_of: dict[str, list[str]] = {}  # chunks of a document mostly share metadata
    stored, first = dimension, ""
    vectors: list[Sequence[float]] = []
    for position, (document_id, chunks) in enumerate(documents):
        if not isinstance(document_id, str) or not document_id:
            raise InvalidInputError(f"document {position} has an empty document_id")
        if document_id in seen:
            raise InvalidInputError(f"document {document_id!r} appears twice in one write")
        seen.add(document_id)
        ids.append(document_id)
        counts.append(len(chunks))
        for chunk in chunks:
            if not isinstance(chunk, Document):
                raise InvalidInputError(
                    f"a chunk of document {document_id!r} is a {type(chunk).__name__}, not a "
                    "Document"
                )
            vector = chunk.embedding
            if vector is None:
                raise InvalidInputError(
                    f"chunk {chunk.id!r} of document {document_id!r} has no embedding: embed "
                    "chunks before storing them"
                )
            if dimension is None:
                dimension = len(vector)
                first = f"chunk {chunk.id!r} of document {document_id!r}"
            if len(vector) != dimension:
                held = (
                    f"holds vectors of dimension {dimension}"
                    if stored is not None
                    else f"got {first} with dimension {dimension} first"
                )
                raise StoreError(
                    f"LanceDB store at {location} {held}; chunk {chunk.id!r} of document "
                    f"{document_id!r} has dimension {len(vector)}: nothing was written"
                )
            try:
                text = json.dumps(chunk.metadata, ensure_ascii=False)
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(
                    f"the metadata of chunk {chunk.id!r} of document {document_id!r} is not "
                    f"JSON: {exc}"
                ) from None
            columns["id"].append(chunk.id)
            columns["document_id"].append(document_id)
            columns["parent_id"].append(chunk.parent_id)
            columns["chunk_index"].append(chunk.index)
            columns["span_start"].append(chunk.start)
            columns["span_end"].append(chunk.end)
            columns["content"].append(chunk.content)
            columns["content_format"].append(str(chunk.content_format))
            columns["metadata"].append(text)
            tokens = tokens_of.get(text)
            if tokens is None:
                tokens = tokens_of[text] = metadata_tokens(json.loads(text))
            columns["where_tokens"].append(tokens)
            columns["search_text"].append(search_text(chunk))
            vectors.append(vector)
    if not vectors:
        return ids, counts, None, dimension
    if dimension == 0:
        raise InvalidInputError("chunks have empty embeddings (dimension 0)")
    import pyarrow as pa

    assert dimension is not None
    flat = np.asarray(vectors, dtype=np.float32).reshape(-1)
    columns_out: dict[str, Any] = dict(columns)
    columns_out["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(flat), dimension)
    return ids, counts, pa.table(columns_out, schema=chunk_schema(dimension)), dimension
