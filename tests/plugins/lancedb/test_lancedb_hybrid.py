"""LanceDBStore's hybrid fusion (relative scores by default, reciprocal ranks on request), the
search text it indexes, and an index of an older format."""

from __future__ import annotations

import pyarrow as pa
import pytest
from ragloom.models import Document
from ragloom.stores import IndexedDocument, StoreError
from ragloom_lancedb import LanceDBStore


def chunk(doc: str, i: int, text: str, vector: list[float], **metadata) -> Document:
    return Document(
        id=f"{doc}#{i}", content=text, parent_id=doc, index=i, start=0, end=len(text),
        metadata=metadata, embedding=vector,
    )


DOCS = [
    IndexedDocument("stash", "1", [
        chunk("stash", 0, "Use --keep-index to leave the index untouched.", [1.0, 0.0, 0.0],
              title="git-stash(1)", headings=["git-stash(1)", "OPTIONS"]),
    ]),
    IndexedDocument("worktree", "1", [
        chunk("worktree", 0, "A linked working tree shares the repository.", [0.0, 1.0, 0.0],
              title="git-worktree(1)"),
    ]),
    IndexedDocument("notes", "1", [
        chunk("notes", 0, "Notes attach text to commits without changing them.", [0.7, 0.7, 0.0]),
    ]),
]


@pytest.fixture
def store(tmp_path):
    with LanceDBStore(tmp_path / "ix") as opened:
        opened.write(DOCS)
        yield opened


def test_the_title_and_headings_are_searched_but_not_returned(store) -> None:
    found = store.search(text="git-stash options", mode="text", top_k=3)
    assert found and found[0].chunk.id == "stash#0"
    assert found[0].chunk.content == "Use --keep-index to leave the index untouched."


def test_relative_fusion_scores_are_in_0_1_best_first(store) -> None:
    found = store.search(vector=[1.0, 0.1, 0.0], text="leave the index untouched", top_k=3)
    scores = [hit.score for hit in found]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert found[0].chunk.id == "stash#0" and scores[0] == pytest.approx(1.0)


def test_the_vector_weight_decides_between_the_lists(tmp_path) -> None:
    def first(**params) -> str:
        with LanceDBStore(tmp_path / "ix", **params) as s:
            if not s.fingerprints():
                s.write(DOCS)
            # the text finds only the worktree chunk; the vector is nearest to the stash one
            return s.search(vector=[1.0, 0.0, 0.0], text="linked", top_k=3)[0].chunk.id

    assert first() == "worktree#0"  # the full text weighs 1.0, the vector 0.2
    assert first(vector_weight=5.0) == "stash#0"
    with LanceDBStore(tmp_path / "ix", hybrid_fusion="rrf", vector_weight=2.0) as s:
        found = {h.chunk.id: h.score for h in s.search(vector=[1.0, 0.0, 0.0], text="linked")}
    # by vector: stash, notes, worktree; by text: worktree alone
    assert found["stash#0"] == pytest.approx(2.0 / 61)
    assert found["worktree#0"] == pytest.approx(1.0 / 61 + 2.0 / 63)


def test_bad_fusion_parameters(tmp_path) -> None:
    with pytest.raises(ValueError, match="hybrid_fusion"):
        LanceDBStore(tmp_path, hybrid_fusion="max")
    with pytest.raises(ValueError, match="vector_weight"):
        LanceDBStore(tmp_path, vector_weight=-1)
    store = LanceDBStore(tmp_path, hybrid_fusion="rrf", vector_weight=0.5)
    assert LanceDBStore(**store.config()).config() == store.config()


def test_an_index_of_the_previous_format_says_how_to_rebuild(tmp_path) -> None:
    import lancedb

    path = tmp_path / "old"
    db = lancedb.connect(str(path))
    mark = {b"ragloom.store": b"ragloom-lancedb/1"}
    schema = pa.schema([pa.field("id", pa.string())], metadata=mark)
    db.create_table("chunks", schema=schema)
    with LanceDBStore(path) as store, pytest.raises(StoreError) as info:
        store.search(text="x", mode="text")
    message = str(info.value)
    assert "format ragloom-lancedb/1" in message and "ragloom index clear" in message
