"""Model-free parts of sub-query generation: the complexity estimate and the fallback rewrite.

Pure functions (no DSPy; only the core's light `ragloom.signals`) so they are cheap to test and
reuse.
"""

from __future__ import annotations

import string

from ragloom.signals import (
    COMPARISON_WORDS,
    CONJUNCTION_WORDS,
    LIST_PUNCTUATION,
    complexity,
)

__all__ = [
    "COMPARISON_WORDS",
    "CONJUNCTION_WORDS",
    "FALLBACK_STOP_WORDS",
    "LIST_PUNCTUATION",
    "check_bounds",
    "clamp",
    "complexity_score",
    "determine_complexity",
    "fallback_rewrite",
]

#: Conversational stop-words removed by the fallback rewrite.
FALLBACK_STOP_WORDS: frozenset[str] = frozenset({"how", "what", "why", "i", "me", "my"})
_PUNCT = string.punctuation + "\u2018\u2019\u201c\u201d\u00bf\u00a1"


def complexity_score(query: str) -> int:
    """The raw complexity score: 1 plus one per signal present in ``query``.

    Signals: comparison language, conjunction language, more than ten words, list punctuation,
    words matched whole and case-insensitively ("and" does not match "standard"); the one
    definition lives in :func:`ragloom.signals.complexity`.
    """
    return complexity(query)


def clamp(value: int, low: int, high: int) -> int:
    """``value`` limited to ``[low, high]``."""
    return max(low, min(high, value))


def check_bounds(min_subqueries: int, max_subqueries: int) -> None:
    """Raise ``ValueError`` unless ``1 <= min_subqueries <= max_subqueries`` (integers)."""
    for name, value in (("min_subqueries", min_subqueries), ("max_subqueries", max_subqueries)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if min_subqueries < 1:
        raise ValueError(f"min_subqueries must be >= 1, got {min_subqueries}")
    if max_subqueries < min_subqueries:
        raise ValueError(
            f"max_subqueries must be >= min_subqueries ({min_subqueries}), got {max_subqueries}"
        )


def determine_complexity(query: str, min_subqueries: int = 2, max_subqueries: int = 5) -> int:
    """How many sub-queries ``query`` warrants: :func:`complexity_score` clamped to the bounds."""
    check_bounds(min_subqueries, max_subqueries)
    return clamp(complexity_score(query), min_subqueries, max_subqueries)


def fallback_rewrite(query: str) -> str:
    """The fallback rewrite: ``query`` without conversational stop-words, never empty.

    A word is dropped when, lower-cased and stripped of surrounding punctuation, it is one of
    :data:`FALLBACK_STOP_WORDS`. If nothing is left ("How? Why?"), the stripped original is
    returned instead, so a fallback is never an empty query.
    """
    kept = [w for w in query.split() if w.strip(_PUNCT).lower() not in FALLBACK_STOP_WORDS]
    rewritten = " ".join(kept).strip()
    if not rewritten.strip(_PUNCT).strip():
        return query.strip()
    return rewritten
