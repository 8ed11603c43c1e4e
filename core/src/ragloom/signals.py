"""How complex a question looks: comparison and conjunction words, length, list punctuation.

Shared by the decomposers, which use the score to decide how many sub-queries to ask for.
Words are matched whole, so "and" never matches "standard".

Pure and light (only ``re``): importing it loads neither pydantic nor anyio.
"""

from __future__ import annotations

import re

__all__ = [
    "COMPARISON_WORDS",
    "CONJUNCTION_WORDS",
    "LIST_PUNCTUATION",
    "LONG_QUERY_WORDS",
    "complexity",
]

#: Comparison language. Inflections are listed explicitly: whole-word matching must not lose
#: "compared" or "differences".
COMPARISON_WORDS: tuple[str, ...] = (
    "compare",
    "compares",
    "compared",
    "comparing",
    "comparison",
    "versus",
    "vs",
    "difference",
    "differences",
)
#: Conjunction language ("&" counts when it stands alone, not inside "AT&T").
CONJUNCTION_WORDS: tuple[str, ...] = ("and", "&", "also")
#: List punctuation (punctuation has no word boundary: any occurrence counts).
LIST_PUNCTUATION: tuple[str, ...] = (":", ";", ",")
#: A query of more than this many whitespace-separated words counts as long.
LONG_QUERY_WORDS = 10


def _whole_words(words: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    # (?<!\w) / (?!\w) instead of \b so that "&" (not a word character) is a whole word too.
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


_COMPARISON = _whole_words(COMPARISON_WORDS)
_CONJUNCTION = _whole_words(CONJUNCTION_WORDS)


def complexity(query: str) -> int:
    """The complexity score before clamping: 1 plus one per signal present (1..5).

    Signals: comparison language (:data:`COMPARISON_WORDS`), conjunction language
    (:data:`CONJUNCTION_WORDS`), more than :data:`LONG_QUERY_WORDS` words, list punctuation
    (:data:`LIST_PUNCTUATION`). Words match whole and case-insensitively, so "and" does not
    match "standard", "Android", "brand" or "Anderson", and "vs" does not match "canvas".
    """
    score = 1
    if _COMPARISON.search(query):
        score += 1
    if _CONJUNCTION.search(query):
        score += 1
    if len(query.split()) > LONG_QUERY_WORDS:
        score += 1
    if ":" in query or ";" in query or "," in query:
        score += 1
    return score
