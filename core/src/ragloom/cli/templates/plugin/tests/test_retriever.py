"""ChunksFileRetriever: ragloom's retriever contract, and its own behaviour."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ragloom import Document
from ragloom.errors import ConfigurationError
from ragloom.plugins import Registry
from ragloom.testing import RetrieverContract

from __PACKAGE__.retriever import ChunksFileRetriever


def write_chunks(path: Path, corpus: list[Document]) -> Path:
    """``corpus`` cut into paragraphs, written as ``ragloom ingest --out`` writes chunks."""
    with path.open("w", encoding="utf-8") as out:
        for doc in corpus:
            start = 0
            for index, part in enumerate(re.split(r"(?<=\n\n)", doc.content)):
                record = {
                    "id": f"{doc.id}#{index}", "parent": doc.id, "start": start,
                    "end": start + len(part), "index": index, "content": part,
                    "content_format": "text", "metadata": doc.metadata,
                }
                out.write(json.dumps(record) + "\n")
                start += len(part)
    return path


class TestChunksFileRetrieverContract(RetrieverContract):
    @pytest.fixture
    def retriever(self, corpus: list[Document], tmp_path: Path) -> ChunksFileRetriever:
        return ChunksFileRetriever(str(write_chunks(tmp_path / "chunks.jsonl", corpus)))


def test_ranks_the_passage_with_the_rarer_words_first(tmp_path: Path) -> None:
    docs = [
        Document(id="a", content="the cache keeps the results of every step"),
        Document(id="b", content="the router picks a route for the query"),
    ]
    retriever = ChunksFileRetriever(str(write_chunks(tmp_path / "c.jsonl", docs)))
    (best, *_rest) = retriever.retrieve("which route does the router pick")
    assert best.chunk.parent_id == "b" and best.chunk.content == docs[1].content


def test_a_bad_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read the chunks file"):
        ChunksFileRetriever(str(tmp_path / "missing.jsonl"))
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"bad\.jsonl, line 1: not a chunk record"):
        ChunksFileRetriever(str(tmp_path / "bad.jsonl"))


def test_registered_under_its_name() -> None:
    name = "__DIST__:__PREFIX__-chunks-file"
    assert Registry().resolve("retriever", name) is ChunksFileRetriever
