"""The query-complexity signals (whole words), from the core's :mod:`ragloom.signals`.

The decomposer uses :func:`complexity` to decide whether a query is worth looking into at all,
and users can call it to size retrieval.
"""

from __future__ import annotations

from ragloom.signals import (
    COMPARISON_WORDS,
    CONJUNCTION_WORDS,
    LIST_PUNCTUATION,
    LONG_QUERY_WORDS,
    complexity,
)

__all__ = [
    "COMPARISON_WORDS",
    "CONJUNCTION_WORDS",
    "LIST_PUNCTUATION",
    "LONG_QUERY_WORDS",
    "complexity",
]
