"""HashingEmbedder: ragloom's embedder contract, and its own behaviour."""

from __future__ import annotations

import pytest
from ragloom import Document, EmbeddingStep, Pipeline
from ragloom.plugins import Registry
from ragloom.testing import EmbedderContract

from __PACKAGE__.embedder import HashingEmbedder


class TestHashingEmbedderContract(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> HashingEmbedder:
        return HashingEmbedder(dimension=64)

    @pytest.fixture
    def variants(self) -> list[HashingEmbedder]:
        return [HashingEmbedder(dimension=64, salt="another model")]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_texts_sharing_words_are_closer() -> None:
    embedder = HashingEmbedder()
    refund, refunds, weather = embedder.embed(
        ["how do I get a refund", "refund rules for annual plans", "sunny weather tomorrow"]
    )
    assert cosine(refund, refunds) > cosine(refund, weather)
    assert embedder.embed([""]) == [[0.0] * 256]


def test_in_an_embedding_step() -> None:
    docs = [Document(id="a", content="some text"), Document(id="b", content="more text")]
    result = Pipeline(EmbeddingStep(HashingEmbedder(dimension=16))).run_sync(docs)
    assert [len(d.embedding or []) for d in result] == [16, 16]


def test_registered_under_its_name() -> None:
    assert Registry().resolve("embedder", "__DIST__:__PREFIX__-hashing") is HashingEmbedder
