"""SemanticChunker: chunk invariants (property-based, with a tiny encoder), topic boundaries
with the bundled model, parameters, configs, and the chunker contract."""

from __future__ import annotations

import json
import unicodedata

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragloom import ConfigurationError, Document, Registry
from ragloom.testing import ChunkerContract, check_chunks, run_step
from ragloom_semantic import SemanticChunker
from ragloom_semantic._segment import sentence_spans
from semantic_support import HashingEncoder

COOKING = (
    "Start by heating olive oil in a large pan over medium heat. Add the chopped onions and "
    "garlic and cook until soft and fragrant. Stir in the tomatoes, season with salt and "
    "pepper, and let the sauce simmer for twenty minutes. Meanwhile boil the pasta in plenty "
    "of salted water until it is al dente. Drain the pasta, toss it with the sauce, and finish "
    "with fresh basil and grated parmesan. "
)
ASTRONOMY = (
    "The night sky is full of stars, planets and distant galaxies. Astronomers use telescopes "
    "to study the light from these objects. Jupiter is the largest planet in our solar system, "
    "and its moons were first observed by Galileo. A light year is the distance that light "
    "travels in one year, nearly ten trillion kilometres. Black holes form when massive stars "
    "collapse at the end of their lives. "
)
FOOTBALL = (
    "The striker scored twice in the second half to win the match for the home team. The "
    "goalkeeper made several important saves before the break. Fans filled the stadium and "
    "sang throughout the game. The coach praised the defence after the final whistle and said "
    "the league title is still possible. Next week the team travels away to face their biggest "
    "rivals in the cup. "
)


def chunk(chunker: SemanticChunker, text: str, **meta) -> list[Document]:
    doc = Document(id="d", content=text, metadata=meta)
    result = anyio.run(run_step, chunker, [doc])
    assert not result.failed, [f.reason for f in result.failed]
    chunks = list(result)
    check_chunks(doc, chunks, chunk_size=chunker.chunk_size)
    return chunks


def boundaries(chunks: list[Document]) -> list[int]:
    return [c.start for c in chunks[1:]]


# -- topic boundaries with the bundled model ---------------------------------------------------


def test_cuts_between_paragraphs_on_different_topics() -> None:
    text = COOKING + "\n\n" + ASTRONOMY + "\n\n" + FOOTBALL
    first = len(COOKING) + 2
    second = first + len(ASTRONOMY) + 2
    for size in (2000, 600):
        chunks = chunk(SemanticChunker(chunk_size=size), text)
        assert boundaries(chunks) == [first, second], size


def test_cuts_near_topic_changes_without_paragraph_breaks() -> None:
    text = COOKING + ASTRONOMY + FOOTBALL
    first, second = len(COOKING), len(COOKING) + len(ASTRONOMY)
    chunks = chunk(SemanticChunker(chunk_size=2000, paragraph_bias=0.0), text)
    cuts = boundaries(chunks)
    assert len(cuts) == 2
    sentence_starts = [s for s, _ in sentence_spans(text)]
    # each cut is at the topic change or at most one sentence away from it
    for cut, change in zip(cuts, (first, second), strict=True):
        i, j = sentence_starts.index(cut), sentence_starts.index(change)
        assert abs(i - j) <= 1, (cut, change)


def test_absolute_threshold_and_window() -> None:
    text = COOKING + "\n\n" + ASTRONOMY + "\n\n" + FOOTBALL
    never = SemanticChunker(chunk_size=5000, breakpoint_type="absolute", breakpoint_threshold=-1)
    assert len(chunk(never, text)) == 1
    always = SemanticChunker(
        chunk_size=5000, breakpoint_type="absolute", breakpoint_threshold=1.0, min_chunk_size=0
    )
    assert len(chunk(always, text)) == len(sentence_spans(text))
    wide = SemanticChunker(chunk_size=2000, window=3)
    assert len(boundaries(chunk(wide, text))) >= 2


def test_size_limit_cuts_inside_a_topic_and_keeps_spans_exact() -> None:
    text = (COOKING * 3 + "\n\n") * 2 + ASTRONOMY * 2
    chunks = chunk(SemanticChunker(chunk_size=300), text)
    assert all(len(c.content) <= 300 for c in chunks)
    assert "".join(c.content for c in chunks) == text


def test_oversized_sentences_split_on_words_then_characters() -> None:
    words = "word " * 100  # one 500-character "sentence"
    chunks = chunk(SemanticChunker(chunk_size=64, min_chunk_size=0), words)
    assert all(c.content.endswith(" ") or c is chunks[-1] for c in chunks)
    assert all(len(c.content) <= 64 for c in chunks)
    long_word = "x" * 150
    pieces = chunk(SemanticChunker(chunk_size=64, min_chunk_size=0), long_word)
    assert [len(c.content) for c in pieces] == [64, 64, 22]
    assert not any(c.metadata.get("oversized") for c in pieces)
    # a base letter with more combining marks than fit is the one unsplittable atom
    cluster = "e" + "\u0301" * 10
    flagged = chunk(SemanticChunker(chunk_size=4, min_chunk_size=0), cluster + " ok")
    assert flagged[0].content == cluster and flagged[0].metadata["oversized"] is True
    assert all(not c.metadata.get("oversized") for c in flagged[1:])


def test_empty_and_whitespace_documents() -> None:
    chunker = SemanticChunker(chunk_size=50)
    assert chunk(chunker, "") == []
    (only,) = chunk(chunker, "  \n\n \t ")
    assert only.content == "  \n\n \t "
    assert [c.content for c in chunk(chunker, "Hi.")] == ["Hi."]


# -- invariants, property-based with a tiny encoder ----------------------------------------------

_pieces = st.sampled_from(
    ["The cat sat.", "Dogs bark!", "Why?", "rain and snow", "e\u0301", "\u0301", "  ", "\n",
     "\n\n", "\t", "word", "x" * 40, "Stars shine. ", "数据", "🙂", "a.b", "...", "”) "]
)
_texts = st.lists(_pieces, max_size=40).map("".join) | st.text(max_size=300)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=_texts,
    chunk_size=st.integers(1, 120),
    min_chunk_size=st.integers(0, 60),
    window=st.integers(1, 3),
    kind=st.sampled_from(["percentile", "absolute"]),
    amount=st.floats(0, 1),
)
def test_chunks_tile_the_text_within_the_size_limit(
    text, chunk_size, min_chunk_size, window, kind, amount
) -> None:
    chunker = SemanticChunker(
        chunk_size=chunk_size,
        min_chunk_size=min_chunk_size,
        window=window,
        breakpoint_type=kind,
        breakpoint_threshold=amount * 100 if kind == "percentile" else amount * 2 - 1,
        encoder=HashingEncoder(16),
    )
    doc = Document(id="p", content=text, metadata={"k": 1})
    pieces = list(chunker.split(doc))
    chunks = chunker.build_chunks(doc, pieces)
    check_chunks(doc, chunks, chunk_size=chunk_size)  # exact spans, tiling, sizes, lineage
    for c in chunks:
        if c.metadata.get("oversized"):
            # only one base character with its combining marks may exceed the limit
            assert len(c.content) > chunk_size
            assert all(unicodedata.combining(ch) for ch in c.content[1:])


# -- parameters and configs ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_size": "big"}, "chunk_size"),
        ({"chunk_size": True}, "chunk_size"),
        ({"window": 0}, "window"),
        ({"min_chunk_size": -1}, "min_chunk_size"),
        ({"breakpoint_type": "gradient"}, "breakpoint_type"),
        ({"breakpoint_threshold": 101}, "breakpoint_threshold"),
        ({"breakpoint_type": "absolute", "breakpoint_threshold": 1.5}, "breakpoint_threshold"),
        ({"breakpoint_threshold": float("inf")}, "breakpoint_threshold"),
        ({"paragraph_bias": -0.1}, "paragraph_bias"),
        ({"model_path": "/nonexistent"}, "model_path"),
        ({"encoder": object()}, "encoder"),
    ],
)
def test_bad_parameters_name_the_parameter(kwargs, name) -> None:
    with pytest.raises(ConfigurationError, match=name):
        SemanticChunker(**kwargs)


def test_config_is_json_rebuilds_and_defaults_resolve() -> None:
    chunker = SemanticChunker(chunk_size=300, breakpoint_type="absolute")
    config = chunker.config()
    assert json.loads(json.dumps(config)) == config
    assert config["breakpoint_threshold"] == 0.5
    rebuilt = SemanticChunker(**config)
    assert SemanticChunker(**rebuilt.config()).config_hash == rebuilt.config_hash
    other = SemanticChunker(chunk_size=301)
    assert other.config_hash != SemanticChunker(chunk_size=300).config_hash
    assert SemanticChunker().config()["breakpoint_threshold"] == 90.0


def test_registry_builds_it_by_entry_point_name() -> None:
    registry = Registry()
    chunker = registry.create("chunker", "semantic", {"chunk_size": 256, "window": 1})
    assert isinstance(chunker, SemanticChunker) and chunker.chunk_size == 256
    assert registry.name_of(chunker) == ("chunker", "semantic")


def test_declarative_ingest_pipeline() -> None:
    from ragloom.config import build_pipeline

    pipeline = build_pipeline(
        {
            "name": "semantic-ingest",
            "steps": [{"chunker": "semantic", "params": {"chunk_size": 600}}],
        }
    )
    text = COOKING + "\n\n" + ASTRONOMY
    docs = [Document(id="a", content=text)]
    result = anyio.run(pipeline.run, docs)
    assert [c.content for c in result] == [COOKING + "\n\n", ASTRONOMY]


class TestSemanticChunkerContract(ChunkerContract):
    @pytest.fixture
    def chunker(self) -> SemanticChunker:
        return SemanticChunker(chunk_size=200)
