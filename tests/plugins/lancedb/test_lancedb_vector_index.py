"""The approximate vector index of LanceDBStore: built by a fold once the table is large enough,
read partly by searches (exact cosines of what it finds), retrained as the table grows, and
never losing matches of a selective ``where``. Small tables and a low threshold keep it fast."""

from __future__ import annotations

import numpy as np
import pytest
from ragloom.models import Document
from ragloom.stores import IndexedDocument
from ragloom_lancedb import LanceDBStore

DIM = 8


def documents(count: int, seed: int, prefix: str = "d") -> tuple[list[IndexedDocument], np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    docs = []
    for lo in range(0, count, 10):
        doc_id = f"{prefix}{lo // 10}"
        docs.append(IndexedDocument(doc_id, f"fp-{doc_id}", [
            Document(id=f"{doc_id}#{i - lo}", content=f"text {i}", parent_id=doc_id,
                     index=i - lo, start=0, end=len(f"text {i}"),
                     metadata={"group": "rare" if i % 211 == 0 else "common"},
                     embedding=vectors[i].tolist())
            for i in range(lo, min(count, lo + 10))
        ]))
    return docs, vectors


def exact(vectors: np.ndarray, ids: list[str], query: np.ndarray, top_k: int, keep=None):
    scores = vectors @ query
    order = [i for i in np.argsort(-scores, kind="stable") if keep is None or keep(i)]
    return [ids[i] for i in order[:top_k]], [float(scores[i]) for i in order[:top_k]]


def indexes(store: LanceDBStore) -> list[str]:
    return sorted(store.info().details["indexes"])


def test_a_fold_builds_the_index_and_search_stays_exact_in_what_it_reads(tmp_path) -> None:
    docs, vectors = documents(1600, seed=1)
    ids = [c.id for d in docs for c in d.chunks]
    by_id = dict(zip(ids, vectors, strict=True))
    store = LanceDBStore(tmp_path / "index", vector_index_rows=1000, vector_nprobes=2)
    store.write(docs[:50])
    store.optimize()
    assert not any(name.startswith("vector_ivf") for name in indexes(store))  # 500 rows
    store.write(docs[50:])
    store.optimize()
    assert "vector_ivfrq10" in indexes(store)  # round(sqrt(1600) / 4) partitions
    rng = np.random.default_rng(7)
    for _ in range(10):
        query = rng.standard_normal(DIM).astype(np.float32)
        query /= np.linalg.norm(query)
        found = store.search(vector=query.tolist(), top_k=10)
        assert 0 < len(found) <= 10
        scores = [hit.score for hit in found]
        assert scores == sorted(scores, reverse=True)
        for hit in found:  # exact cosines, even when a partition was not read
            assert hit.score == pytest.approx(float(by_id[hit.chunk.id] @ query), abs=1e-5)
        # a selective condition never loses matches: fewer matches (8) than top_k anywhere,
        # so the search falls back to an exact one whatever partitions it read
        rare = store.search(vector=query.tolist(), top_k=10, where={"group": "rare"})
        want, _ = exact(vectors, ids, query, 10, keep=lambda i: i % 211 == 0)
        assert [hit.chunk.id for hit in rare] == want
    store.close()
    reopened = LanceDBStore(tmp_path / "index", vector_index_rows=1000)  # default nprobes
    query = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    want, _ = exact(vectors, ids, query, 10)
    assert [hit.chunk.id for hit in reopened.search(vector=query.tolist(), top_k=10)] == want
    reopened.close()
    with LanceDBStore(tmp_path / "index", vector_index_rows=None, vector_nprobes=1) as off:
        for _ in range(5):  # None: the index is never read, every search is exact
            query = rng.standard_normal(DIM).astype(np.float32)
            found = off.search(vector=query.tolist(), top_k=10)
            assert [h.chunk.id for h in found] == exact(vectors, ids, query, 10)[0]


def test_the_index_is_retrained_as_the_table_grows_and_can_be_turned_off(tmp_path) -> None:
    small, _ = documents(400, seed=2)
    with LanceDBStore(tmp_path / "grow", vector_index_rows=300) as store:
        store.write(small)
        store.optimize()
        assert "vector_ivfrq5" in indexes(store)
        more, _ = documents(800, seed=3, prefix="m")
        store.write(more)
        store.optimize()  # 1,200 rows want 9 partitions: not yet twice as many
        assert "vector_ivfrq5" in indexes(store)
        extra, _ = documents(800, seed=4, prefix="x")
        store.write(extra)
        store.optimize()  # 2,000 rows want 11 partitions
        names = indexes(store)
        assert "vector_ivfrq11" in names and "vector_ivfrq5" not in names
    with LanceDBStore(tmp_path / "off", vector_index_rows=None) as store:
        store.write(small)
        store.optimize()
        assert not any(name.startswith("vector_ivf") for name in indexes(store))
        assert store.config()["vector_index_rows"] is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_index_settings_are_refused(tmp_path, bad) -> None:
    with pytest.raises(ValueError, match="vector_index_rows"):
        LanceDBStore(tmp_path, vector_index_rows=bad)
    with pytest.raises(ValueError, match="vector_nprobes"):
        LanceDBStore(tmp_path, vector_nprobes=bad)
