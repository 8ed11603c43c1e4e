"""``LanceDBStore.optimize`` (``ragloom index optimize``) is safe while another handle searches
(that ingest leaves the vector index to it: test_lancedb_bounded.py).

Sequenced, not raced: a reader opens and searches, a writer optimizes (compaction, the vector
index built, old versions removed), then the same reader searches again."""

from __future__ import annotations

import numpy as np
from ragloom.models import Document
from ragloom.stores import IndexedDocument
from ragloom_lancedb import LanceDBStore

DIM = 8
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def batch(count: int, seed: int, prefix: str) -> list[IndexedDocument]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    docs = []
    for lo in range(0, count, 10):
        doc_id = f"{prefix}{lo // 10}"
        chunks = []
        for i in range(lo, min(count, lo + 10)):
            text = f"{WORDS[i % 8]} {WORDS[(i * 3) % 8]} note {prefix.strip('-')}x{i}"
            chunks.append(Document(
                id=f"{doc_id}#{i - lo}", content=text, parent_id=doc_id, index=i - lo,
                start=0, end=len(text), embedding=vectors[i].tolist(),
            ))
        docs.append(IndexedDocument(doc_id, f"fp-{doc_id}", chunks))
    return docs


def ranking(store: LanceDBStore, query: list[float]) -> list[list[tuple[str, float]]]:
    """Vector, text and hybrid results (random vectors and a word of one chunk: no ties)."""
    return [
        [(h.chunk.id, round(h.score, 5)) for h in found]
        for found in (
            store.search(vector=query, top_k=10, mode="vector"),
            store.search(text="b4x121", top_k=10, mode="text"),
            store.search(vector=query, text="b4x121", top_k=10),
        )
    ]


def test_optimize_is_safe_while_a_reader_searches(tmp_path) -> None:
    path = tmp_path / "index"
    with LanceDBStore(path, vector_index_rows=None) as writer:
        for k in range(6):
            writer.write(batch(150, seed=k, prefix=f"b{k}-"))
    query = np.random.default_rng(42).standard_normal(DIM).astype(np.float32).tolist()
    reader = LanceDBStore(path, vector_index_rows=500)  # opened before the optimize
    before = ranking(reader, query)
    assert [hit for hit, _ in before[1]] == ["b4-12#1"]
    assert before[2][0][0] == "b4-12#1" and len(before[0]) == len(before[2]) == 10
    version = reader.read_version()
    with LanceDBStore(path, vector_index_rows=500) as optimizer:
        optimizer.optimize()  # compacts, builds vector_ivfrq4b8, removes the old versions
        assert "vector_ivfrq4b8" in optimizer.info().details["indexes"]
    import lance

    kept = [v["version"] for v in lance.dataset(str(path / "chunks.lance")).versions()]
    assert len(kept) == 1 and version is not None and version[1] not in kept  # files gone
    # the same handle, after: same results (8 partitions, all probed: exact), new version
    assert ranking(reader, query) == before
    assert reader.read_version() != version
    reader.close()


def test_a_row_found_again_at_the_same_version_is_not_read_again(tmp_path, monkeypatch) -> None:
    import lance

    taken: list[int] = []
    take = lance.LanceDataset._take_rows

    def counting(self, row_ids, *args, **kwargs):
        taken.append(len(row_ids))
        return take(self, row_ids, *args, **kwargs)

    monkeypatch.setattr(lance.LanceDataset, "_take_rows", counting)
    path = tmp_path / "index"
    with LanceDBStore(path, vector_index_rows=None) as writer:
        writer.write(batch(150, seed=1, prefix="b4-"))
    query = np.random.default_rng(3).standard_normal(DIM).astype(np.float32).tolist()
    with LanceDBStore(path, vector_index_rows=None) as reader:
        first = ranking(reader, query)
        read = sum(taken)
        # the hybrid search's rows were among the vector's and the text's: at most 20 read
        assert 10 < read <= 20 and sum(len(found) for found in first) == 21
        taken.clear()
        assert ranking(reader, query) == first and taken == []  # every row kept
        with LanceDBStore(path, vector_index_rows=None) as writer:
            writer.delete(["b4-0"])  # a new version: its row ids are read afresh
            writer.write(batch(150, seed=1, prefix="b4-")[:1])
        assert ranking(reader, query) == first and sum(taken) == read
