"""Property tests: every ragloom-text chunker keeps the chunk invariants on generated text.

Generated documents mix words (ASCII and not), long unbreakable words, whitespace runs,
sentence ends, Markdown (headings, fences, tables), code, and repeated passages.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragloom import Chunker, Document
from ragloom_text import (
    CodeChunker,
    MarkdownChunker,
    RecursiveCharacterTextSplitter,
    SentenceChunker,
)
from ragloom_text.lengths import count_words
from text_checks import check_spans, literal_boundaries

CHUNKERS: list[type[Any]] = [
    RecursiveCharacterTextSplitter,
    MarkdownChunker,
    SentenceChunker,
    CodeChunker,
]

words = st.text(alphabet="abcdeXYZ01éß日本語🙂", min_size=1, max_size=10)
long_words = st.text(alphabet="xyz", min_size=25, max_size=90)
spaces = st.sampled_from([" ", "  ", "\n", "\n\n", "\n\n\n", "\t", " \n ", "\r\n", "\n  \n"])
punctuation = st.sampled_from([". ", "! ", "? ", "。", ", ", "...", "e.g. ", "“Quoted.” "])
markdown = st.sampled_from(
    [
        "# Title\n",
        "\n## Section two\n\n",
        "### Deep ###\n",
        "Setext\n======\n",
        "```python\nprint('x')\n# not a heading\n```\n",
        "~~~\nunclosed fence\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "| x |\n| y |\n",
        "---\n",
        "> quote\n",
        "- item\n",
    ]
)
code = st.sampled_from(
    [
        "def f(x):\n    return x\n",
        "\n\nclass A:\n    pass\n",
        "\n@decorator\n",
        "\n    def m(self):\n        pass\n",
        "\nfn main() {}\n",
        "\nexport function g() {}\n",
    ]
)
fragment = st.one_of(words, words, spaces, punctuation, long_words, markdown, code)
passages = st.lists(fragment, max_size=40).map("".join)
documents = st.one_of(
    passages,
    st.tuples(passages, st.integers(2, 4), passages).map(lambda t: t[0] * t[1] + t[2]),
    st.text(max_size=120),
)


def run(chunker: Chunker, text: str) -> list[Document]:
    doc = Document(id="p", content=text, content_format="text")
    return chunker.build_chunks(doc, chunker.split(doc))


def spans_of(chunks: list[Document]) -> list[tuple[int, int, dict[str, Any]]]:
    return [(c.start or 0, c.end or 0, c.metadata) for c in chunks]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=documents,
    size=st.integers(1, 90),
    cls=st.sampled_from(CHUNKERS),
    data=st.data(),
)
def test_chunk_invariants_hold_in_characters(
    text: str, size: int, cls: type[Any], data: st.DataObject
) -> None:
    overlap = data.draw(st.sampled_from([0, 0, size // 4, size - 1]), label="overlap")
    chunker = cls(chunk_size=size, chunk_overlap=overlap)
    chunks = run(chunker, text)
    for c in chunks:
        assert c.content == text[c.start : c.end]
    # the string API slices the spans directly: the same strings as the chunk documents'
    assert chunker.split_text(text) == [c.content for c in chunks]
    check_spans(text, spans_of(chunks), size, overlap, where=cls.__name__)
    if overlap == 0:
        assert "".join(c.content for c in chunks) == text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents, size=st.integers(1, 60), cls=st.sampled_from(CHUNKERS), data=st.data())
def test_measured_length_gives_the_same_chunks_as_character_arithmetic(
    text: str, size: int, cls: type[Any], data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    fast = cls(chunk_size=size, chunk_overlap=overlap)
    measured = cls(chunk_size=size, chunk_overlap=overlap, length_function=lambda t: len(t))
    assert fast.spans(text) == measured.spans(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents, size=st.integers(1, 12), cls=st.sampled_from(CHUNKERS), data=st.data())
def test_chunk_invariants_hold_in_words(
    text: str, size: int, cls: type[Any], data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    chunks = run(cls(chunk_size=size, chunk_overlap=overlap, length_function="words"), text)
    check_spans(text, spans_of(chunks), size, overlap, count_words, where=cls.__name__)


@settings(max_examples=150, deadline=None)
@given(
    text=documents,
    size=st.integers(1, 40),
    separators=st.lists(st.sampled_from(["\n\n", "\n", ". ", " ", "x"]), min_size=1, max_size=3),
    data=st.data(),
)
def test_oversized_chunks_are_unsplittable_atoms_and_overlaps_start_on_separators(
    text: str, size: int, separators: list[str], data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    splitter = RecursiveCharacterTextSplitter(size, overlap, separators=separators)
    chunks = run(splitter, text)
    check_spans(text, spans_of(chunks), size, overlap)
    cuts = set().union(*(literal_boundaries(text, sep) for sep in separators))
    previous_end = 0
    for c in chunks:
        assert c.start is not None and c.end is not None
        if c.metadata.get("oversized"):
            assert len(c.content) > size
            assert not any(c.start < b < c.end for b in cuts), "an oversized chunk had a cut"
        if c.start < previous_end:
            assert c.start in cuts, "an overlap starts off a separator boundary"
        previous_end = c.end


@settings(max_examples=100, deadline=None)
@given(text=documents, size=st.integers(1, 60), cls=st.sampled_from(CHUNKERS))
def test_chunking_is_deterministic_and_empty_text_gives_nothing(
    text: str, size: int, cls: type[Any]
) -> None:
    chunker = cls(chunk_size=size)
    assert chunker.spans(text) == cls(chunk_size=size).spans(text)
    assert run(chunker, "") == []
