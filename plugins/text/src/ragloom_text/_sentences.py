"""Sentence splitting: pack whole sentences up to the limit.

A sentence ends after terminal punctuation (``. ! ? …`` and the CJK full-width marks), any
closing quotes or brackets, and the whitespace that follows, when the next sentence does not
start with a lower-case ASCII letter (so ``e.g. this`` and ``etc. and`` stay whole); a blank
line also ends one. A sentence longer than the limit is cut at line ends, then spaces, then
characters.

Nothing here imports ragloom.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragloom_text._levels import Level, chars, literal, points, regex_points
from ragloom_text._spans import Span, pack

__all__ = ["SENTENCE_END", "sentence_levels", "sentence_spans"]

SENTENCE_END = re.compile(
    r"[.!?\u2026\u203d]+[\"'\u201d\u2019\u00bb)\]]*\s+(?![a-z])"
    r"|[\u3002\uff01\uff1f]+[\u300d\u300f\u201d\u2019\uff09]*\s*"
    r"|\n[ \t\r]*\n\s*"
)
"""A sentence ends where a match of this pattern ends."""


def sentence_levels(text: str) -> list[Level]:
    """The boundary levels of prose for whole-sentence packing, most preferred first."""
    return [
        points(text, regex_points(text, SENTENCE_END, increasing=True)),
        literal(text, "\n"),
        literal(text, " "),
        chars(text),
    ]


def sentence_spans(
    text: str,
    chunk_size: int,
    chunk_overlap: int = 0,
    length: Callable[[str], int] | None = None,
) -> list[Span]:
    """Split prose into exact ``(start, end, oversized)`` spans of whole sentences."""
    return pack(text, sentence_levels(text), chunk_size, chunk_overlap, length)
