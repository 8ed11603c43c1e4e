"""ParagraphChunker: ragloom's chunker contract, and its own behaviour."""

from __future__ import annotations

from typing import Any

import pytest
from ragloom import Document, Pipeline
from ragloom.plugins import Registry
from ragloom.testing import ChunkerContract

from __PACKAGE__.chunker import ParagraphChunker


class TestParagraphChunkerContract(ChunkerContract):
    # The kit also checks the chunks of documents generated from an alphabet of letters, digits,
    # punctuation and whitespace. If your chunker splits on a character outside it, add it:
    #     from ragloom.testing import DEFAULT_ALPHABET
    #     alphabet = DEFAULT_ALPHABET + "\u00a7"
    @pytest.fixture
    def chunker(self) -> ParagraphChunker:
        return ParagraphChunker(chunk_size=200)

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        return [{"chunk_size": 100}]


def test_paragraphs_are_packed_and_long_ones_cut() -> None:
    text = "one\n\ntwo\n\n" + "x" * 30
    chunks = ParagraphChunker(chunk_size=12).split_text(text)
    assert chunks == ["one\n\ntwo\n\n", "x" * 12, "x" * 12, "x" * 6]
    assert "".join(chunks) == text


def test_in_a_pipeline() -> None:
    docs = [Document(id="a", content="a\n\nb"), Document(id="b", content="c" * 13)]
    result = Pipeline(ParagraphChunker(chunk_size=12)).run_sync(docs)
    assert [(c.id, c.content) for c in result] == [
        ("a#0", "a\n\nb"), ("b#0", "c" * 12), ("b#1", "c"),
    ]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        ParagraphChunker(chunk_size=0)


def test_registered_under_its_name() -> None:
    registry = Registry()
    assert registry.resolve("chunker", "__DIST__:__PREFIX__-paragraphs") is ParagraphChunker
    built = registry.create("chunker", "__DIST__:__PREFIX__-paragraphs", {"chunk_size": 50})
    assert built.chunk_size == 50
