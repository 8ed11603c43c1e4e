"""A StoreRetriever answers a search asked again from the searches it kept, only while the
store says it is at the same version."""

from __future__ import annotations

import pickle

from ragloom.models import Document
from ragloom.retrieval import MEMO_SEARCHES, StoreRetriever
from ragloom.stores import ScoredChunk, Store, StoreInfo, matches_where


class VersionedStore(Store):
    """Chunks in a list; text search by shared words; counts its searches; a version that
    changes on every write (``None``: it cannot tell)."""

    step_id = "test/versioned-store"

    def __init__(self, tells_version: bool = True) -> None:
        self.tells_version = tells_version
        self.version = 1
        self.searches = 0
        self.chunks = [self._chunk("a", "refund policy"), self._chunk("b", "password reset")]

    @staticmethod
    def _chunk(doc: str, text: str, **metadata: str) -> Document:
        return Document(id=f"{doc}#0", content=text, parent_id=doc, index=0, start=0,
                        end=len(text), metadata={"topic": doc, **metadata})

    def read_version(self) -> int | None:
        return self.version if self.tells_version else None

    def write(self, documents) -> None:
        for indexed in documents:
            self.chunks.extend(indexed.chunks)
        self.version += 1

    def delete(self, document_ids) -> int:  # pragma: no cover - unused
        return 0

    def fingerprints(self) -> dict[str, str]:
        return {}

    def info(self) -> StoreInfo:
        return StoreInfo("memory", 2, len(self.chunks), None)

    def search(self, *, vector=None, text=None, top_k=10, where=None, mode=None):
        self.searches += 1
        words = set((text or "").lower().replace("?", "").split())
        found = [c for c in self.chunks
                 if matches_where(c.metadata, where) and words & set(c.content.split())]
        return [ScoredChunk(c, 1.0 / n) for n, c in enumerate(found[:top_k], 1)]


def ids(hits) -> list[str]:
    return [hit.chunk.id for hit in hits]


def test_a_search_asked_again_is_answered_from_the_kept_one_until_the_store_changes() -> None:
    from ragloom.stores import IndexedDocument

    store = VersionedStore()
    retriever = StoreRetriever(store, mode="text")
    first = retriever.retrieve("refund reset")
    assert retriever.retrieve("refund reset") == first and store.searches == 1
    # another query, k or condition is another search
    retriever.retrieve("refund reset", top_k=1)
    retriever.retrieve("refund reset", where={"topic": "a"})
    retriever.retrieve("refund")
    assert store.searches == 4
    # a write moves the version: the kept searches are stale
    store.write([IndexedDocument("c", "f", [VersionedStore._chunk("c", "refund window")])])
    again = retriever.retrieve("refund reset")
    assert store.searches == 5 and ids(again) == [*ids(first), "c#0"]


def test_a_store_that_cannot_tell_its_version_is_searched_every_time() -> None:
    store = VersionedStore(tells_version=False)
    retriever = StoreRetriever(store, mode="text")
    retriever.retrieve("refund")
    retriever.retrieve("refund")
    assert store.searches == 2


def test_the_kept_searches_are_bounded_and_a_pickled_retriever_keeps_none() -> None:
    store = VersionedStore()
    retriever = StoreRetriever(store, mode="text")
    for n in range(MEMO_SEARCHES + 1):
        retriever.retrieve(f"refund {n}")
    retriever.retrieve(f"refund {MEMO_SEARCHES}")  # the newest is kept
    assert store.searches == MEMO_SEARCHES + 1
    retriever.retrieve("refund 0")  # the oldest was dropped
    assert store.searches == MEMO_SEARCHES + 2
    copy = pickle.loads(pickle.dumps(retriever))
    copy.retrieve("refund 1")
    assert copy.store.searches == MEMO_SEARCHES + 3
