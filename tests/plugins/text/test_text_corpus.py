"""The chunk invariants on at least 20 MB of real text nobody here wrote.

The corpus (``tests/support/corpus.py``) is built from files already on the machine: the long
descriptions of installed distributions, documentation files under site-packages, and the
standard library's sources. Each chunker runs on the formats it is meant for, with and without
overlap; the checks cost a few operations per chunk.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ragloom import Document
from ragloom_text import (
    CodeChunker,
    MarkdownChunker,
    RecursiveCharacterTextSplitter,
    SentenceChunker,
)
from ragloom_text.lengths import count_words
from text_checks import check_spans

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from support.corpus import build_corpus, corpus_bytes  # noqa: E402

MIN_BYTES = 20_000_000


# one pytest-xdist worker runs the whole module (--dist loadgroup):
# the corpus is built once
pytestmark = pytest.mark.xdist_group("text-corpus")


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, str, str]]:
    entries = build_corpus(MIN_BYTES)
    size = corpus_bytes(entries)
    if size < MIN_BYTES:
        pytest.skip(f"this machine offers only {size} bytes of text for the corpus")
    return entries


def test_corpus_is_large_mixed_and_deterministic(corpus: list[tuple[str, str, str]]) -> None:
    formats = {fmt for _, fmt, _ in corpus}
    assert {"code", "text"} <= formats
    assert len({name for name, _, _ in corpus}) == len(corpus)
    assert build_corpus(MIN_BYTES) is corpus  # cached per process


CASES: list[tuple[type[Any], set[str]]] = [
    (RecursiveCharacterTextSplitter, {"markdown", "text", "rst", "code"}),
    (MarkdownChunker, {"markdown"}),
    (SentenceChunker, {"text", "rst", "markdown"}),
    (CodeChunker, {"code"}),
]


@pytest.mark.parametrize("overlap", [0, 64])
@pytest.mark.parametrize(("cls", "formats"), CASES, ids=[c.__name__ for c, _ in CASES])
def test_invariants_on_the_corpus(
    corpus: list[tuple[str, str, str]], cls: type[Any], formats: set[str], overlap: int
) -> None:
    chunker = cls(chunk_size=512, chunk_overlap=overlap)
    seen = 0
    for name, fmt, text in corpus:
        if fmt not in formats:
            continue
        spans = chunker.spans(text)
        check_spans(text, spans, 512, overlap, where=name)
        seen += 1
    assert seen


def test_chunks_built_by_the_core_are_exact_slices(corpus: list[tuple[str, str, str]]) -> None:
    chunker = MarkdownChunker(chunk_size=512, chunk_overlap=64)
    for name, fmt, text in corpus:
        if fmt != "markdown":
            continue
        doc = Document(id=name, content=text, content_format=fmt)
        chunks = chunker.build_chunks(doc, chunker.split(doc))
        assert all(c.content == text[c.start : c.end] for c in chunks), name
        assert all(isinstance(c.metadata["headings"], list) for c in chunks)


@pytest.mark.parametrize(
    ("length_name", "length"), [("words", count_words), ("custom", lambda t: (len(t) + 3) // 4)]
)
def test_invariants_with_measured_lengths_on_part_of_the_corpus(
    corpus: list[tuple[str, str, str]], length_name: str, length: Callable[[str], int]
) -> None:
    budget = 1_500_000  # measured lengths are slower: a sample of every format
    taken: dict[str, int] = {}
    spec: Any = "words" if length_name == "words" else length
    chunkers = {
        "markdown": MarkdownChunker(100, 16, length_function=spec),
        "code": CodeChunker(100, 16, length_function=spec),
        "text": RecursiveCharacterTextSplitter(100, 16, length_function=spec),
        "rst": SentenceChunker(100, 16, length_function=spec),
    }
    for name, fmt, text in corpus:
        if taken.get(fmt, 0) > budget // 4:
            continue
        taken[fmt] = taken.get(fmt, 0) + len(text)
        check_spans(text, chunkers[fmt].spans(text), 100, 16, length, where=name)
    assert len(taken) == 4


@pytest.mark.parametrize("overlap", [0, 24])
def test_token_budgets_on_part_of_the_corpus(
    corpus: list[tuple[str, str, str]], overlap: int
) -> None:
    """Every chunk within 128 tokens of the bundled tokenizer, counted alone, on real text."""
    pytest.importorskip("tokenizers")
    from ragloom_text import default_chunker_router
    from ragloom_text.tokens import TokenCount, default_tokenizer_path

    if default_tokenizer_path() is None:
        pytest.skip("ragloom-semantic (the bundled model's tokenizer) is not installed")
    count = TokenCount()
    router = default_chunker_router(128, overlap, length_function="tokens")
    budget = 1_000_000
    taken: dict[str, int] = {}
    for name, fmt, text in corpus:
        if taken.get(fmt, 0) > budget // 4:
            continue
        taken[fmt] = taken.get(fmt, 0) + len(text)
        chunks = router.chunk(Document(id=name, content=text, content_format=fmt))
        assert all(c.content == text[c.start : c.end] for c in chunks), name
        spans = [(c.start, c.end, c.metadata) for c in chunks]
        check_spans(text, spans, 128, overlap, count, where=name)
    assert len(taken) == 4
