"""ragloom's conformance kit (``ragloom.testing.ChunkerContract``) run on every chunker."""

from __future__ import annotations

import pytest
from ragloom import Chunker
from ragloom.testing import ChunkerContract
from ragloom_text import (
    CodeChunker,
    MarkdownChunker,
    RecursiveCharacterTextSplitter,
    SentenceChunker,
    default_chunker_router,
)


class TestRecursiveContract(ChunkerContract):
    @pytest.fixture
    def chunker(self) -> Chunker:
        return RecursiveCharacterTextSplitter(chunk_size=60, chunk_overlap=12)


class TestRecursiveInWordsContract(ChunkerContract):
    @pytest.fixture
    def chunker(self) -> Chunker:
        return RecursiveCharacterTextSplitter(chunk_size=9, length_function="words")


class TestMarkdownContract(ChunkerContract):
    @pytest.fixture
    def chunker(self) -> Chunker:
        return MarkdownChunker(chunk_size=80, chunk_overlap=16)


class TestSentenceContract(ChunkerContract):
    @pytest.fixture
    def chunker(self) -> Chunker:
        return SentenceChunker(chunk_size=70)


class TestCodeContract(ChunkerContract):
    @pytest.fixture
    def chunker(self) -> Chunker:
        return CodeChunker(chunk_size=90, chunk_overlap=10)


def test_the_default_router_is_accepted_where_a_chunker_is() -> None:
    assert isinstance(default_chunker_router(), Chunker)
