"""ClauseSplitter: ragloom's decomposer contract, and its own behaviour."""

from __future__ import annotations

from typing import Any

import pytest
from ragloom.plugins import Registry
from ragloom.testing import QueryTransformerContract

from __PACKAGE__.decomposer import ClauseSplitter


class TestClauseSplitterContract(QueryTransformerContract):
    @pytest.fixture
    def decomposer(self) -> ClauseSplitter:
        return ClauseSplitter()

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        return [{"max_parts": 1}]


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("How do I install it and how do I test it?", ["How do I install it", "how do I test it?"]),
        ("What is it? Why use it?", ["What is it?", "Why use it?"]),
        ("pricing; refunds ;", ["pricing", "refunds"]),
        ("salt and pepper", ["salt and pepper"]),
        ("   ", []),
    ],
)
def test_clauses(question: str, parts: list[str]) -> None:
    assert ClauseSplitter().transform_sync(question) == parts


def test_at_most_max_parts() -> None:
    assert ClauseSplitter(max_parts=2).transform_sync("a; b; c") == ["a", "b"]
    with pytest.raises(ValueError, match="max_parts"):
        ClauseSplitter(max_parts=0)


def test_registered_under_its_name() -> None:
    assert Registry().resolve("decomposer", "__DIST__:__PREFIX__-clauses") is ClauseSplitter
