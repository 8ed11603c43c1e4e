"""The default embedder and the default store together: real vectors, real text, real search."""

from __future__ import annotations

import pytest
from ragloom.models import Document
from ragloom.stores import IndexedDocument
from ragloom_lancedb import LanceDBStore

semantic = pytest.importorskip("ragloom_semantic")

DOCS = {
    "billing.md": [
        "Refunds are issued to the original payment method within five business days.",
        "You can cancel your subscription at any time from the account page.",
    ],
    "weather.md": [
        "Tomorrow brings heavy rain and strong winds along the coast.",
        "Temperatures drop below freezing overnight in the mountains.",
    ],
    "cooking.md": [
        "Knead the dough for ten minutes, then let it rise for an hour.",
        "",  # an empty chunk: a zero vector, stored and found by nothing but its document
    ],
}


def indexed(embedder) -> list[IndexedDocument]:
    out = []
    for doc_id, texts in DOCS.items():
        vectors = embedder.embed(texts)
        chunks = []
        start = 0
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
            chunks.append(Document(
                id=f"{doc_id}#{i}", content=text, parent_id=doc_id, index=i, start=start,
                end=start + len(text), metadata={"file": doc_id}, embedding=vector.tolist(),
            ))
            start += len(text)
        out.append(IndexedDocument(doc_id, f"{doc_id}:{embedder.config_hash}", chunks))
    return out


def test_questions_find_their_passages(tmp_path) -> None:
    embedder = semantic.Model2VecEmbedder()
    with LanceDBStore(tmp_path) as store:
        store.write(indexed(embedder))
        assert store.info().dimension == embedder.dimension == 256
        for question, expected in [
            ("when will my refund be issued", "billing.md#0"),
            ("will it rain tomorrow", "weather.md#0"),
            ("how long should bread dough rise", "cooking.md#0"),
        ]:
            vector = embedder.embed_query(question)
            assert store.search(vector=vector, top_k=1)[0].chunk.id == expected
            hybrid = store.search(vector=vector, text=question, top_k=3)
            assert hybrid[0].chunk.id == expected
        only_weather = store.search(
            vector=embedder.embed_query("refund"), top_k=5, where={"file": "weather.md"}
        )
        assert {r.chunk.parent_id for r in only_weather} == {"weather.md"}
        assert store.info().chunks == 6
