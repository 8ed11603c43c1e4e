"""The complexity heuristic and the fallback rewrite (spec 002, with whole-word matching)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom_dspy import determine_complexity, fallback_rewrite
from ragloom_dspy._heuristics import check_bounds, complexity_score


@pytest.mark.parametrize(
    ("query", "score"),
    [
        ("renewable energy", 1),
        ("compare solar energy", 2),
        ("solar versus wind", 2),
        ("solar vs. wind", 2),
        ("the difference between solar power", 2),
        ("solar and wind", 2),
        ("solar & wind", 2),
        ("solar power also wind", 2),
        ("one two three four five six seven eight nine ten eleven", 2),
        ("energy: solar", 2),
        ("solar; wind", 2),
        ("solar, wind", 2),
        ("Compare solar and wind power costs: Germany, France, Spain, Italy in 2024 too", 5),
    ],
)
def test_each_signal_adds_one(query: str, score: int) -> None:
    assert complexity_score(query) == score


@pytest.mark.parametrize(
    "query",
    [
        "standard library",  # "and" inside a word
        "Android phones",
        "candy brand",
        "AT&T plans",  # "&" inside a token
        "vsphere hosting",  # "vs" inside a word
        "incomparable hotels",
        "alsoran horses",
    ],
)
def test_signal_words_match_whole_words_only(query: str) -> None:
    assert complexity_score(query) == 1


def test_matching_ignores_case() -> None:
    assert complexity_score("Solar AND Wind") == 2
    assert complexity_score("COMPARE Solar") == 2


def test_ten_words_is_not_long() -> None:
    assert complexity_score(" ".join(["word"] * 10)) == 1
    assert complexity_score(" ".join(["word"] * 11)) == 2


def test_determine_complexity_clamps_to_bounds() -> None:
    assert determine_complexity("solar", 2, 5) == 2
    assert determine_complexity("solar", 1, 5) == 1
    busy = "Compare solar and wind power costs: Germany, France, Spain, Italy in 2024 too"
    assert determine_complexity(busy, 2, 5) == 5
    assert determine_complexity(busy, 2, 3) == 3


@pytest.mark.parametrize(
    ("low", "high", "message"),
    [
        (0, 5, "min_subqueries must be >= 1"),
        (3, 2, "max_subqueries must be >= min_subqueries"),
        (True, 5, "min_subqueries must be an integer"),
        (2, 5.0, "max_subqueries must be an integer"),
    ],
)
def test_bounds_are_validated(low: object, high: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_bounds(low, high)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200), st.integers(1, 6), st.integers(0, 4))
def test_complexity_always_within_bounds(query: str, low: int, extra: int) -> None:
    assert low <= determine_complexity(query, low, low + extra) <= low + extra


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How do I reset my password?", "do reset password?"),
        ("What is RAG", "is RAG"),
        ("why, me?", "why, me?"),  # nothing left: the stripped original
        ("  How? Why?  ", "How? Why?"),
        ("Showcase whatever mighty items", "Showcase whatever mighty items"),  # whole words
        ("solar panels", "solar panels"),
    ],
)
def test_fallback_rewrite(query: str, expected: str) -> None:
    assert fallback_rewrite(query) == expected


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=120).filter(lambda s: s.strip()))
def test_fallback_is_never_empty(query: str) -> None:
    rewritten = fallback_rewrite(query)
    assert rewritten.strip()
    assert rewritten == rewritten.strip()
