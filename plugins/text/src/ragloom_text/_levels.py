"""Boundary levels: the places where a text may be cut, one set per kind of separator.

A *boundary* is an offset ``b`` with ``0 < b < len(text)`` at which a chunk may end and the next
begin. A :class:`Level` is one kind of boundary, made of any of:

- literal separators: the ends of all their occurrences, overlapping ones included
  (``{m + len(sep) : text.startswith(sep, m)}``), so a separator stays with the text before it;
- explicit points (a sorted list, possibly computed lazily from a regex), optionally *ranked*
  (lower rank preferred: Markdown headings by depth);
- every character offset;

minus the interiors ``(start, end)`` of masked regions (e.g. code blocks that must stay whole).

Levels answer range queries (``last_in``, ``first_in``, ``first_after``) with ``str.rfind`` /
``str.find`` over the window and ``bisect`` over points, in one call per level, so packing costs
a few C-level scans per chunk instead of a Python loop per character. ``boundaries()``
materialises the set; only the measured (custom length function) path needs it.

Nothing here imports ragloom.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence

__all__ = ["Level", "chars", "literal", "points", "ranked", "regex_points"]

Points = Sequence[int] | Callable[[], list[int]]


class Level:
    """One kind of boundary in one text (see the module doc)."""

    __slots__ = ("_list", "_make", "_points", "char", "mask_ends", "mask_starts", "n",
                 "rank_of", "seps", "text")  # fmt: skip

    def __init__(
        self,
        text: str,
        *,
        seps: Sequence[str] = (),
        points: Points | None = None,
        ranks: Sequence[int] | None = None,
        char: bool = False,
        mask: tuple[Sequence[int], Sequence[int]] | None = None,
    ) -> None:
        if any(not sep for sep in seps):
            raise ValueError("literal separators must be non-empty; use char=True")
        self.text = text
        self.n = len(text)
        self.seps = tuple(seps)
        self._make: Callable[[], list[int]] | None = None
        self._points: list[int] | None = None
        if callable(points):
            self._make = points
        elif points is not None:
            self._points = list(points)
        self.rank_of = list(ranks) if ranks is not None else None
        self.char = char
        self.mask_starts: Sequence[int] = ()
        self.mask_ends: Sequence[int] = ()
        if mask is not None and len(mask[0]):
            self.mask_starts, self.mask_ends = mask
        self._list: list[int] | None = None

    @property
    def is_char(self) -> bool:
        return self.char

    def masked(self, starts: Sequence[int], ends: Sequence[int]) -> Level:
        """This level without the boundaries strictly inside the regions ``(start, end)``."""
        make = self._make
        return Level(
            self.text,
            seps=self.seps,
            points=make if make is not None else self._points,
            ranks=self.rank_of,
            char=self.char,
            mask=(starts, ends),
        )

    def point_list(self) -> list[int]:
        if self._points is None:
            self._points = self._make() if self._make is not None else []
        return self._points

    def _inside(self, b: int) -> int:
        """Index of the masked region that strictly contains ``b``, or -1."""
        j = bisect_left(self.mask_starts, b) - 1
        return j if j >= 0 and b < self.mask_ends[j] else -1

    # -- range queries -------------------------------------------------------------------------

    def last_in(self, lo: int, hi: int) -> int:
        """The largest boundary ``b`` with ``lo < b <= hi``, or -1."""
        text, n = self.text, self.n
        while True:
            end = hi if hi < n - 1 else n - 1
            best = -1
            if end > lo:
                if self.char:
                    best = end
                else:
                    for sep in self.seps:
                        k = len(sep)
                        start = lo - k + 1
                        m = text.rfind(sep, start if start > 0 else 0, end)
                        if m >= 0 and m + k > best:
                            best = m + k
                    pts = self._points if self._points is not None else self.point_list()
                    if pts:
                        i1 = bisect_right(pts, end)
                        if i1 and pts[i1 - 1] > lo:
                            if self.rank_of is None:
                                if pts[i1 - 1] > best:
                                    best = pts[i1 - 1]
                            else:
                                i0 = bisect_right(pts, lo)
                                window = self.rank_of[i0:i1]
                                top = min(window)
                                best = pts[i1 - 1 - window[::-1].index(top)]
            if best < 0 or not self.mask_starts:
                return best
            j = self._inside(best)
            if j < 0:
                return best
            hi = self.mask_starts[j]

    def first_in(self, lo: int, hi: int) -> int:
        """The smallest boundary ``b`` with ``lo <= b < hi``, or -1."""
        text, n = self.text, self.n
        while True:
            end = hi - 1 if hi - 1 < n - 1 else n - 1  # the last admissible boundary
            first = lo if lo > 1 else 1
            if end < first:
                return -1
            if self.char:
                best = first
            else:
                best = -1
                for sep in self.seps:
                    k = len(sep)
                    start = first - k
                    m = text.find(sep, start if start > 0 else 0, end)
                    if m >= 0 and (best < 0 or m + k < best):
                        best = m + k
                        end = best - 1
                pts = self._points if self._points is not None else self.point_list()
                if pts:
                    i = bisect_left(pts, first)
                    if i < len(pts) and pts[i] <= end and (best < 0 or pts[i] < best):
                        best = pts[i]
            if best < 0 or not self.mask_starts:
                return best
            j = self._inside(best)
            if j < 0:
                return best
            lo = self.mask_ends[j]

    def first_after(self, x: int) -> int:
        """The smallest boundary ``b > x``, or -1."""
        return self.first_in(x + 1, self.n)

    # -- materialised --------------------------------------------------------------------------

    def boundaries(self) -> list[int]:
        """The sorted boundary set."""
        if self._list is None:
            n = self.n
            found: list[int]
            if self.char:
                found = []
                pos = 1  # every offset outside the masked interiors, a range at a time
                for start, end in zip(self.mask_starts, self.mask_ends, strict=True):
                    found.extend(range(pos, min(start, n - 1) + 1))
                    pos = max(pos, end)
                found.extend(range(pos, n))
                self._list = found
                return found
            else:
                merged = set(self.point_list())
                limit = max(n - 1, 0)  # an occurrence ending at len(text) is not a boundary
                for sep in self.seps:
                    k = len(sep)
                    pattern = re.compile("(?=" + re.escape(sep) + ")")
                    merged.update(m.start() + k for m in pattern.finditer(self.text, 0, limit))
                found = sorted(merged)
            if self.mask_starts:
                found = [b for b in found if self._inside(b) < 0]
            self._list = found
        return self._list

    def ranks(self) -> list[Level]:
        """This level as plain levels, most preferred rank first (itself when unranked)."""
        if self.rank_of is None:
            return [self]
        pts = self.point_list()
        return [
            Level(
                self.text, points=[b for b, r in zip(pts, self.rank_of, strict=True) if r == rank]
            )
            for rank in sorted(set(self.rank_of))
        ]


def literal(text: str, *seps: str) -> Level:
    """The ends of the occurrences of any of ``seps``."""
    return Level(text, seps=seps)


def chars(text: str) -> Level:
    """Every offset: the last resort that keeps every chunk within the limit."""
    return Level(text, char=True)


def points(text: str, found: Points) -> Level:
    """Explicit boundaries, a sorted list inside ``(0, len(text))`` or a callable making one."""
    return Level(text, points=found)


def ranked(text: str, positions: Sequence[int], ranks: Sequence[int]) -> Level:
    """Boundaries with ranks: ``last_in`` returns the farthest of the best rank in the window,
    exactly what trying one level per rank in order would return, for the cost of one call."""
    return Level(text, points=positions, ranks=ranks)


def regex_points(
    text: str, pattern: re.Pattern[str], *, group: int = 0, increasing: bool = False
) -> Callable[[], list[int]]:
    """A lazy point list: where each match (or its ``group``) ends, inside ``(0, len(text))``.

    ``increasing=True`` promises that those ends strictly increase (true of a pattern whose
    matches are never empty), which saves a sort. Patterns that start with a literal (e.g.
    ``\\n(?=...)``) let the regex engine skip ahead in C; a pattern that starts with ``^``
    under ``re.M`` is tried at every offset instead.
    """
    n = len(text)

    def make() -> list[int]:
        if increasing:
            found = [m.end(group) for m in pattern.finditer(text)]
        else:
            found = sorted({m.end(group) for m in pattern.finditer(text)})
        return found[bisect_right(found, 0) : bisect_left(found, n)]

    return make
