"""complexity(): spec 002's score before clamping, with whole-word signals."""

from __future__ import annotations

import pytest
from ragloom_rules import complexity


@pytest.mark.parametrize(
    ("query", "score"),
    [
        ("What is the refund policy?", 1),
        # signal words hidden inside other words never count
        ("What is the standard Android brand?", 1),
        ("Who is Anderson?", 1),
        ("Is it versatile?", 1),
        ("Do I understand canvas prices?", 1),
        ("Is the comparative study done?", 1),
        ("Is AT&T good?", 1),
        ("Any differencing tricks?", 1),
        # each signal alone
        ("Python vs Java", 2),
        ("Python vs. Java", 2),
        ("Python versus Java", 2),
        ("Compare Python to Java", 2),
        ("How does Python compare?", 2),
        ("Python compared with Java", 2),
        ("What is the difference?", 2),
        ("Any differences?", 2),
        ("cats and dogs", 2),
        ("salt & pepper", 2),
        ("Also what is it?", 2),
        ("one two three four five six seven eight nine ten eleven", 2),
        ("Hello: world", 2),
        ("a; b", 2),
        ("a, b", 2),
        # case-insensitive
        ("PYTHON VS JAVA", 2),
        ("Cats AND dogs", 2),
        # combinations up to the maximum of 5
        ("Compare Python and Java", 3),
        ("Compare Python, Java and Go", 4),
        (
            "Compare the standard plans of Android brands and also the premium ones, please",
            5,
        ),
    ],
)
def test_complexity(query: str, score: int) -> None:
    assert complexity(query) == score


def test_ten_words_is_not_long_but_eleven_is() -> None:
    assert complexity(" ".join(["word"] * 10)) == 1
    assert complexity(" ".join(["word"] * 11)) == 2


def test_complexity_is_between_one_and_five() -> None:
    assert complexity("") == 1
    assert complexity("Compare A vs B and also C, D; E: F G H I J K L M N") == 5
