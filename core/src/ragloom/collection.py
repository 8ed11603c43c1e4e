"""Collections: named bodies of documents in one index.

Ingest records each document's collection in the metadata of every one of its chunks (key
``collection``: by default the top-level folder under the path ingested, see
:func:`ragloom.ingest.walk_inputs`), so that a search restricted to some collections is an
ordinary metadata condition, ``where={"collection": [...]}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["COLLECTION_KEY", "CollectionInfo", "collection_where", "list_collections"]


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    """One collection of an index: its name (``None``: chunks stored without a collection),
    how many documents and chunks it holds."""

    name: str | None
    documents: int
    chunks: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "documents": self.documents, "chunks": self.chunks}


#: The metadata key of a document's (and each of its chunks') collection.
COLLECTION_KEY = "collection"


def list_collections(store: Any) -> list[CollectionInfo]:
    """The collections of the index ``store``, by name (chunks without one last).

    Uses the store's ``count_values`` when it has one (ragloom-lancedb reads two light
    columns), else reads its chunks (``chunks()``); a store that can do neither lists none.
    """
    counter = getattr(store, "count_values", None)
    if callable(counter):
        counted: dict[Any, tuple[int, int]] = counter(COLLECTION_KEY)
        return [CollectionInfo(name, docs, chunks) for name, (docs, chunks) in counted.items()]
    reader = getattr(store, "chunks", None)
    if not callable(reader):
        return []
    documents: dict[str | None, set[str]] = {}
    chunks: dict[str | None, int] = {}
    for document_id, found in reader().items():
        for chunk in found:
            value = chunk.metadata.get(COLLECTION_KEY)
            name = value if isinstance(value, str) else None
            documents.setdefault(name, set()).add(document_id)
            chunks[name] = chunks.get(name, 0) + 1
    return [
        CollectionInfo(name, len(documents[name]), chunks[name])
        for name in sorted(chunks, key=lambda n: (n is None, n or ""))
    ]


def collection_where(collections: list[str] | tuple[str, ...] | None) -> dict[str, Any] | None:
    """The ``where`` condition that keeps the chunks of any of ``collections`` (``None`` or
    empty: no condition)."""
    if not collections:
        return None
    return {COLLECTION_KEY: list(collections)}
