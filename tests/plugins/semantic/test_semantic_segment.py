"""The pure segmentation module: sentences, window similarities, breakpoints, packing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom_semantic._segment import (
    breakpoint_mask,
    pack_chunks,
    paragraph_sentences,
    semantic_spans,
    sentence_spans,
    split_oversized,
    window_similarities,
)


def texts_of(text: str, spans) -> list[str]:
    return [text[s:e] for s, e, *_ in spans]


def test_sentences_end_after_punctuation_and_blank_lines() -> None:
    text = 'He said "Stop!" Then left. Pi is 3.14 here.\n\nNew para\nsame para? Yes…  end'
    assert texts_of(text, sentence_spans(text)) == [
        'He said "Stop!" ', "Then left. ", "Pi is 3.14 here.\n\n", "New para\nsame para? ",
        "Yes…  ", "end",
    ]
    spans, paragraph_end = paragraph_sentences(text)
    assert paragraph_end == [False, False, True, False, False, False]
    assert sentence_spans("") == []
    assert texts_of("  lead", sentence_spans("  lead")) == ["  lead"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .!?\n\t\"')…。")), max_size=80) | st.text())
def test_sentences_tile_any_text(text: str) -> None:
    spans = sentence_spans(text)
    assert "".join(texts_of(text, spans)) == text
    assert all(s < e for s, e in spans)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab \n") + ["\u0301", "e", "\u200d"]), max_size=60),
    limit=st.integers(1, 12),
)
def test_split_oversized_tiles_and_respects_the_limit(text: str, limit: int) -> None:
    pieces = split_oversized(text, 0, len(text), limit)
    assert "".join(texts_of(text, pieces)) == text
    for start, end, oversized in pieces:
        assert end > start
        assert oversized == (end - start > limit)


def test_split_oversized_prefers_word_boundaries() -> None:
    text = "alpha beta gamma delta"
    assert texts_of(text, split_oversized(text, 0, len(text), 11)) == [
        "alpha beta ", "gamma delta",
    ]
    assert texts_of(text, split_oversized(text, 6, 16, 5)) == ["beta ", "gamma"]


def test_window_similarities() -> None:
    e = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=np.float32)
    assert window_similarities(e, 1).tolist() == pytest.approx([1.0, 0.0, 1.0])
    two = window_similarities(e, 2)
    assert two[1] == pytest.approx(0.0) and two[0] == pytest.approx(2**-0.5)
    with_zero = np.array([[1, 0], [0, 0], [0, 1]], dtype=np.float32)
    assert window_similarities(with_zero, 1).tolist() == [1.0, 1.0]  # no evidence: no cut
    assert window_similarities(e[:1], 1).size == 0
    with pytest.raises(ValueError):
        window_similarities(e, 0)


def test_breakpoints() -> None:
    sims = np.array([0.9, 0.2, 0.8, 0.1, 0.95])
    assert breakpoint_mask(sims, "absolute", 0.5).tolist() == [False, True, False, True, False]
    assert breakpoint_mask(sims, "percentile", 60).tolist() == [False, True, False, True, False]
    assert not breakpoint_mask(sims, "percentile", 100).any()
    assert breakpoint_mask(np.zeros(0), "absolute", 0.5).size == 0
    with pytest.raises(ValueError, match="breakpoint_type"):
        breakpoint_mask(sims, "gradient", 1)


def test_pack_cuts_long_sections_at_their_least_similar_gap() -> None:
    text = "aaaa bbbb cccc dddd "
    sentences = [(0, 5), (5, 10), (10, 15), (15, 20)]
    sims = np.array([0.9, 0.1, 0.8])
    none = np.zeros(3, dtype=bool)
    assert texts_of(text, pack_chunks(sentences, sims, none, text, chunk_size=12)) == [
        "aaaa bbbb ", "cccc dddd ",
    ]
    assert texts_of(text, pack_chunks(sentences, sims, none, text, chunk_size=20)) == [text]
    breaks = np.array([True, False, False])
    assert texts_of(text, pack_chunks(sentences, sims, breaks, text, chunk_size=20)) == [
        "aaaa ", "bbbb cccc dddd ",
    ]
    # a piece below min_chunk_size joins its more similar neighbour when both fit
    merged = pack_chunks(sentences, sims, breaks, text, chunk_size=20, min_chunk_size=6)
    assert texts_of(text, merged) == [text]
    tight = pack_chunks(sentences, sims, breaks, text, chunk_size=12, min_chunk_size=6)
    assert all(e - s <= 12 for s, e, _ in tight)


def test_semantic_spans_with_a_toy_encoder() -> None:
    def encode(texts: list[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] if "cat" in t else [0.0, 1.0] for t in texts])

    text = "A cat. The cat. My cat. A car. The car. My car."
    spans = semantic_spans(text, encode, chunk_size=100, breakpoint_type="absolute",
                           breakpoint_threshold=0.5, window=1)
    assert texts_of(text, spans) == ["A cat. The cat. My cat. ", "A car. The car. My car."]
    assert semantic_spans("", encode, chunk_size=10) == []
    assert texts_of("x" * 25, semantic_spans("x" * 25, encode, chunk_size=10)) == [
        "x" * 10, "x" * 10, "x" * 5,
    ]
