"""Regular expressions written by users (separators with ``is_separator_regex=True``), matched
under a time limit.

They run on the ``regex`` module, whose matching is that of the standard ``re`` module (its
``VERSION0`` behaviour) and which can stop a search after a timeout. A pattern that backtracks
catastrophically, such as ``(a|aa)+$`` on a long run of ``a`` that does not end the text, would
otherwise hold the run for hours; here it stops after :func:`time_limit` seconds with
:class:`PatternTimeout`. Normal patterns match in time linear in the text, far below the limit.

The built-in patterns of this package (Markdown, sentences, code) are fixed and checked, and
keep using ``re``.

Nothing here imports ragloom.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

import regex

__all__ = [
    "BASE_SECONDS",
    "SECONDS_PER_MILLION_CHARS",
    "PatternTimeout",
    "compile_pattern",
    "pattern_points",
    "time_limit",
]

#: Seconds any pattern may take over one text...
BASE_SECONDS = 1.0
#: ... plus this many per million characters of the text (normal patterns need far less).
SECONDS_PER_MILLION_CHARS = 1.0

error = regex.error


class PatternTimeout(TimeoutError):
    """A user's pattern took longer than its time limit on a text."""

    def __init__(self, pattern: str, seconds: float, length: int) -> None:
        self.pattern = pattern
        self.seconds = seconds
        self.length = length
        super().__init__(
            f"pattern {pattern!r} took longer than {seconds:.1f} s on a text of {length} "
            "characters: it backtracks catastrophically (nested or overlapping repetition "
            "such as '(a+)+' or '(a|aa)+'); rewrite it"
        )


def compile_pattern(pattern: str, flags: int = 0) -> Any:
    """``pattern`` compiled by the ``regex`` module (``regex.error`` when invalid)."""
    return regex.compile(pattern, flags)


def time_limit(length: int) -> float:
    """Seconds a pattern may take over a text of ``length`` characters."""
    return BASE_SECONDS + SECONDS_PER_MILLION_CHARS * length / 1_000_000


def pattern_points(text: str, pattern: str) -> Callable[[], list[int]]:
    """A lazy point list: where each match of ``pattern`` ends, inside ``(0, len(text))``.

    Raises (when called):
        PatternTimeout: the matching took longer than :func:`time_limit`.
    """
    n = len(text)

    def make() -> list[int]:
        compiled = compile_pattern(pattern)
        limit = time_limit(n)
        try:
            found = sorted({m.end() for m in compiled.finditer(text, timeout=limit)})
        except TimeoutError:
            raise PatternTimeout(pattern, limit, n) from None
        return found[bisect_right(found, 0) : bisect_left(found, n)]

    return make
