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
    assert "vector_ivfrq4b10" in indexes(store)  # round(sqrt(1600) / 4) partitions
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
        assert "vector_ivfrq4b5" in indexes(store)
        more, _ = documents(800, seed=3, prefix="m")
        store.write(more)
        store.optimize()  # 1,200 rows want 9 partitions: not yet twice as many
        assert "vector_ivfrq4b5" in indexes(store)
        extra, _ = documents(800, seed=4, prefix="x")
        store.write(extra)
        store.optimize()  # 2,000 rows want 11 partitions
        names = indexes(store)
        assert "vector_ivfrq4b11" in names and "vector_ivfrq4b5" not in names
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


def clustered(count: int, dim: int, seed: int) -> tuple[list[IndexedDocument], np.ndarray]:
    """Vectors around 20 centres (as text embeddings are), in documents of 10 chunks."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, dim))
    vectors = (centres[rng.integers(0, 20, count)] + 0.6 * rng.standard_normal((count, dim)))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    docs = [
        IndexedDocument(f"c{lo}", f"fp-c{lo}", [
            Document(id=f"c{lo}#{i - lo}", content="text", parent_id=f"c{lo}",
                     index=i - lo, start=0, end=4, embedding=vectors[i].tolist())
            for i in range(lo, min(count, lo + 10))
        ])
        for lo in range(0, count, 10)
    ]
    return docs, vectors


def test_the_quantized_index_finds_what_exact_search_does_with_exact_scores(tmp_path) -> None:
    docs, vectors = clustered(2000, 64, seed=5)
    ids = [c.id for d in docs for c in d.chunks]
    by_id = dict(zip(ids, vectors, strict=True))
    rng = np.random.default_rng(11)
    queries = vectors[rng.choice(len(vectors), 20, replace=False)]
    with LanceDBStore(tmp_path / "index", vector_index_rows=1000, vector_nprobes=4) as store:
        store.write(docs)
        store.optimize()
        assert "vector_ivfrq4b11" in indexes(store)  # round(sqrt(2000) / 4): 4 of 11 read
        hits = 0
        for query in queries:
            found = store.search(vector=query.tolist(), top_k=10, mode="vector")
            for hit in found:  # ranked again by their exact vectors
                assert hit.score == pytest.approx(float(by_id[hit.chunk.id] @ query), abs=1e-5)
            hits += len({h.chunk.id for h in found} & set(exact(vectors, ids, query, 10)[0]))
        assert hits / (10 * len(queries)) >= 0.9  # 1.0 here; 0.95 is the benchmark's bar


def test_an_index_of_exact_vectors_from_an_older_version_is_read_then_rebuilt(
    tmp_path,
) -> None:
    from lancedb.index import IvfFlat

    docs, vectors = documents(1600, seed=6)
    ids = [c.id for d in docs for c in d.chunks]
    with LanceDBStore(tmp_path / "index", vector_index_rows=None) as writer:
        writer.write(docs)
        writer.optimize()  # no vector index: None never builds one
        chunks = writer._tables()[0]
        chunks.create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=10),
                            name="vector_ivf10")  # as versions before IVF_RQ named it
    query = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    with LanceDBStore(tmp_path / "index", vector_index_rows=1000) as store:
        # read (all 10 partitions wanted: exact), and optimize is recommended
        found = store.search(vector=query.tolist(), top_k=10, mode="vector")
        assert [h.chunk.id for h in found] == exact(vectors, ids, query, 10)[0]
        assert "exact vectors" in (store.optimize_due() or "")
        store.optimize()
        assert "vector_ivfrq4b10" in indexes(store) and "vector_ivf10" not in indexes(store)
        assert store.optimize_due() is None


def test_an_index_of_one_bit_vectors_from_an_older_version_is_read_then_rebuilt(
    tmp_path,
) -> None:
    from lancedb.index import IvfRq

    docs, vectors = documents(1600, seed=8)
    ids = [c.id for d in docs for c in d.chunks]
    by_id = dict(zip(ids, vectors, strict=True))
    with LanceDBStore(tmp_path / "index", vector_index_rows=None) as writer:
        writer.write(docs)
        writer.optimize()
        chunks = writer._tables()[0]
        chunks.create_index("vector", config=IvfRq(distance_type="cosine", num_partitions=10),
                            name="vector_ivfrq10")  # as versions before four bits named it
    query = vectors[7] + 0.5 * vectors[9]
    query = query / np.linalg.norm(query)
    with LanceDBStore(tmp_path / "index", vector_index_rows=1000) as store:
        # read as quantized (its candidates ranked again by exact cosines), then rebuilt
        for hit in store.search(vector=query.tolist(), top_k=10, mode="vector"):
            assert hit.score == pytest.approx(float(by_id[hit.chunk.id] @ query), abs=1e-5)
        assert "1 bit per dimension" in (store.optimize_due() or "")
        store.optimize()
        assert "vector_ivfrq4b10" in indexes(store) and "vector_ivfrq10" not in indexes(store)
        assert store.optimize_due() is None
