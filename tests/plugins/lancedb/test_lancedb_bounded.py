"""What a fold during ingest touches is bounded by what was written since the last fold, never
by the whole table: files already folded are never rewritten, no file grows past about
twice the fragment size, and new rows go into new index segments instead of being merged into
the old ones (merging, and the approximate vector index that reads every vector, are left to
``optimize``). The fold thresholds are lowered so that a few thousand rows show it; what this
means in memory is measured by ``benchmarks/bench_scale.py``."""

from __future__ import annotations

import lance
import numpy as np
import ragloom_lancedb.store as store_module
from ragloom.models import Document
from ragloom.stores import IndexedDocument
from ragloom_lancedb import LanceDBStore


def batch(k: int, rng: np.random.Generator) -> list[IndexedDocument]:
    docs = []
    for d in range(50):
        doc_id = f"k{k}d{d}"
        chunks = [
            Document(
                id=f"{doc_id}#{i}", content=f"batch{k} word{i}", parent_id=doc_id, index=i,
                start=0, end=len(f"batch{k} word{i}"), embedding=rng.standard_normal(8).tolist(),
            )
            for i in range(10)
        ]
        docs.append(IndexedDocument(doc_id, f"fp-{doc_id}", chunks))
    return docs


def test_folds_never_rewrite_the_table_or_merge_its_indexes(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(store_module, "_OPTIMIZE_ROWS", 1000)
    monkeypatch.setattr(store_module, "_COMMIT_ROWS", 0)
    monkeypatch.setattr(store_module, "_FRAGMENT_ROWS", 600)
    rng = np.random.default_rng(0)
    path = tmp_path / "index"

    def fragments() -> dict[int, int]:
        dataset = lance.dataset(str(path / "chunks.lance"))
        return {f.fragment_id: f.count_rows() for f in dataset.get_fragments()}

    def segments() -> dict[str, int]:
        dataset = lance.dataset(str(path / "chunks.lance"))
        return {i.name: len(i.segments) for i in dataset.describe_indices()}

    seen: dict[int, int] = {}
    with LanceDBStore(path, vector_index_rows=1000) as store:
        for k in range(6):  # 3,000 rows: a fold after every second write
            store.write(batch(k, rng))
            now = fragments()
            # a fragment once there keeps its rows (a fold that rewrote it would renumber it)
            assert all(now.get(i) == rows for i, rows in seen.items() if rows >= 1000)
            assert max(now.values()) <= 2 * 600
            seen = now
        assert segments()["search_text_idx"] >= 3  # one per fold: never merged
        # every segment is searched: the first and the last batch are found whole
        for k in (0, 5):
            found = store.search(text=f"batch{k}", top_k=1000, mode="text")
            assert len(found) == 500
            assert all(h.chunk.content.startswith(f"batch{k} ") for h in found)
        assert "3,000 chunks" in (store.optimize_due() or "")
    with LanceDBStore(path, vector_index_rows=1000) as store:
        # the vector index is left to optimize, which ingest's summary recommends
        assert not any(n.startswith("vector_ivf") for n in segments())
        assert "3,000 chunks" in (store.optimize_due() or "")
        assert len(fragments()) >= 3
        store.optimize()  # merges the segments and builds the vector index
        # and joins the table into large files (a search's rows are read from fewer)
        assert list(fragments().values()) == [3000]
        merged = segments()
        assert merged["search_text_idx"] == 1 and "vector_ivfrq4b14" in merged  # sqrt(3000) / 4
        assert store.optimize_due() is None
        assert len(store.search(text="batch3", top_k=1000, mode="text")) == 500
