"""Greedy packing of boundary levels into exact chunk spans, and the recursive splitter.

``pack`` is the engine every chunker of this package shares. Given levels ordered from the most
to the least preferred kind of boundary, it cuts each chunk at the *farthest* boundary of the
*most preferred* level that keeps the chunk within ``chunk_size``:

- chunk ``[s, e)`` ends at ``e = max{b in level L : lo < b <= limit}`` for the first level ``L``
  that has such a boundary (``lo`` is ``s``, or the previous chunk's end when overlapping);
- when no level has one, ``[s, e)`` is a single atom that cannot be split: it ends at the next
  boundary of any level (or the end of the text) and is flagged oversized;
- with ``chunk_overlap > 0`` the next chunk starts at the earliest separator boundary (any
  non-character level) within the last ``chunk_overlap`` units of the previous chunk, or does
  not overlap when there is none (character boundaries serve only when no other level exists);
  it must end past the previous chunk's end, and if that is impossible within the limit, that
  chunk does not overlap.

For character counting (``length=None``) the limit is offset arithmetic (``s + chunk_size``) and
each chunk costs a few C-level ``rfind``/``bisect`` calls. A length that can count slices of a
whole text at once (``length.slice_counts(text)``, e.g. a tokenizer whose tokens never cross
whitespace: see ``_counting``) bounds each chunk by whole units and measures only the
candidates in the unit where the budget runs out, every accepted chunk counted exactly. Any
other length function is measured on candidate slices: a doubling probe bounds the reach, then
a galloping search over each level's boundaries finds the farthest fit (exact when the
function is monotone in the slice; a chunk is only ever accepted after its length was measured
within the limit).

Nothing here imports ragloom.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol

from ragloom_text._levels import Level, chars, literal, points
from ragloom_text._regex import pattern_points

__all__ = ["Span", "pack", "recursive_spans", "separator_levels"]

Span = tuple[int, int, bool]
"""``(start, end, oversized)``: an exact ``[start, end)`` slice of the text."""

LengthFunction = Callable[[str], int]


class SliceCounts(Protocol):
    """Exact lengths of the slices of one text (see ``_counting.UnitCounts``)."""

    def count(self, a: int, b: int) -> int: ...

    def limit_after(self, s: int, budget: int) -> int: ...

    def limit_before(self, e: int, budget: int) -> int: ...


def slice_counts(length: LengthFunction | None, text: str) -> SliceCounts | None:
    """``length.slice_counts(text)`` when the length offers it (and can for this text)."""
    counts_of = getattr(length, "slice_counts", None)
    return counts_of(text) if counts_of is not None else None  # type: ignore[no-any-return]


def pack(
    text: str,
    levels: Sequence[Level],
    chunk_size: int,
    chunk_overlap: int = 0,
    length: LengthFunction | None = None,
    *,
    overlap_levels: Sequence[Level] | None = None,
    counts: SliceCounts | None = None,
) -> list[Span]:
    """Cut ``text`` into spans using ``levels`` (most preferred first); see the module doc.

    ``overlap_levels`` may name a subset of the separator levels whose union equals the union
    of all of them (e.g. line ends cover paragraph ends): the overlap search then asks fewer
    levels for the same answer. ``counts`` are the slice counts of ``text`` by ``length`` when
    the caller already has them.
    """
    if not text:
        return []
    word_levels, char_levels = _overlap_levels(levels)
    if overlap_levels is not None and word_levels:
        word_levels = list(overlap_levels)
    if length is None:
        return _pack_chars(text, levels, chunk_size, chunk_overlap, word_levels, char_levels)
    if counts is None:
        counts = slice_counts(length, text)
    if counts is not None:
        return _pack_counted(
            text, levels, chunk_size, chunk_overlap, counts, word_levels or char_levels
        )
    levels = [plain for lv in levels for plain in lv.ranks()]
    return _pack_measured(text, levels, chunk_size, chunk_overlap, length, word_levels, char_levels)


def _overlap_levels(levels: Sequence[Level]) -> tuple[list[Level], list[Level]]:
    """Levels an overlap may start at: separators; characters only when nothing else exists.

    Starting an overlap in the middle of a word would repeat a fragment, which helps no
    reader, so a chunk that has no separator boundary in its tail simply does not overlap.
    """
    word_levels = [lv for lv in levels if not lv.is_char]
    char_levels = [] if word_levels else [lv for lv in levels if lv.is_char]
    return word_levels, char_levels


def _pack_chars(
    text: str,
    levels: Sequence[Level],
    size: int,
    overlap: int,
    word_levels: Sequence[Level],
    char_levels: Sequence[Level],
) -> list[Span]:
    n = len(text)
    out: list[Span] = []
    append = out.append
    s = lo = 0
    while True:
        hi = s + size
        if hi >= n:
            append((s, n, False))
            return out
        e = -1
        for lv in levels:
            e = lv.last_in(lo, hi)
            if e >= 0:
                break
        if e < 0:
            if s < lo:  # the overlap left no room for new text: start this chunk unoverlapped
                s = lo
                continue
            e = n
            for lv in levels:
                b = lv.first_after(hi)
                if 0 <= b < e:
                    e = b
            append((s, e, True))
        else:
            append((s, e, False))
        if e >= n:
            return out
        nxt = e
        if overlap:
            start = e - overlap
            if start <= s:
                start = s + 1
            if start < e:
                for lv in word_levels:
                    b = lv.first_in(start, nxt)
                    if b >= 0:
                        nxt = b
                if nxt == e:
                    for lv in char_levels:
                        b = lv.first_in(start, nxt)
                        if b >= 0:
                            nxt = b
        s, lo = nxt, e


class _Candidates:
    """The boundaries of one level after ``lo`` (plus the text's end), indexable."""

    __slots__ = ("_inner", "bl", "count", "i0", "lo", "n", "stop")

    def __init__(self, level: Level, lo: int, stop: int, n: int) -> None:
        """Candidates ``b`` with ``lo < b < stop``, then ``n`` itself when ``n < stop``."""
        self.lo, self.n, self.stop = lo, n, stop
        if level.char and not level.mask_starts:
            self.bl: list[int] | None = None
            self.i0 = 0
            inner = min(stop, n) - lo - 1
            self.count = max(inner, 0) + (1 if n < stop else 0)
            self._inner = max(inner, 0)
        else:
            self.bl = level.boundaries()
            self.i0 = bisect_right(self.bl, lo)
            inner = bisect_left(self.bl, min(stop, n)) - self.i0
            self.count = max(inner, 0) + (1 if n < stop else 0)
            self._inner = max(inner, 0)

    def __getitem__(self, k: int) -> int:
        if self.bl is None:
            b = self.lo + 1 + k
            return b if b < self.n else self.n
        if k < self._inner:
            return self.bl[self.i0 + k]
        return self.n


def _farthest_fit(cands: _Candidates, fits: Callable[[int], bool]) -> int:
    """The farthest candidate that fits, by galloping then bisecting; -1 if the first fails."""
    m = cands.count
    if m == 0 or not fits(cands[0]):
        return -1
    good, step = 0, 1
    bad = m
    while good + 1 < m:
        k = min(good + step, m - 1)
        if fits(cands[k]):
            good = k
            step *= 2
        else:
            bad = k
            break
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits(cands[mid]):
            good = mid
        else:
            bad = mid
    return cands[good]


def _pack_measured(
    text: str,
    levels: Sequence[Level],
    size: int,
    overlap: int,
    length: LengthFunction,
    word_levels: Sequence[Level],
    char_levels: Sequence[Level],
) -> list[Span]:
    n = len(text)
    out: list[Span] = []
    s = lo = 0
    while True:
        start = s

        def fits(b: int, start: int = start) -> bool:
            return length(text[start:b]) <= size

        # Bound the search: the first probed prefix that is too long ends every candidate.
        stop = n + 1
        width = max(size, 16)
        while s + width < n:
            if not fits(s + width):
                stop = s + width
                break
            width *= 2
        e = -1
        for lv in levels:
            e = _farthest_fit(_Candidates(lv, lo, stop, n), fits)
            if e >= 0:
                break
        if e < 0:
            if s < lo:
                s = lo
                continue
            e = n
            for lv in levels:
                b = lv.first_after(lo)
                if 0 <= b < e:
                    e = b
            out.append((s, e, not fits(e)))
        else:
            out.append((s, e, False))
        if e >= n:
            return out
        nxt = e
        if overlap:
            nxt = _overlap_start(text, word_levels, char_levels, s, e, overlap, length)
        s, lo = nxt, e


#: Candidates measured one by one in the unit where a budget runs out before bisecting.
_WALK = 32


def _pack_counted(
    text: str,
    levels: Sequence[Level],
    size: int,
    overlap: int,
    counts: SliceCounts,
    overlap_levels: Sequence[Level],
) -> list[Span]:
    """``pack`` for a length with exact slice counts: each chunk ends at the farthest boundary,
    of the most preferred level that has one, whose slice fits (the packing rule of the module
    doc). The search starts at the end of the unit where the budget runs out (nothing past it
    fits) and walks back, measuring each candidate; after ``_WALK`` misses in one level it
    bisects for the reach instead (a word's prefix may take more tokens than the word, so a
    bisection can stop short of the farthest fit, never past the budget)."""
    n = len(text)
    count = counts.count
    out: list[Span] = []
    s = lo = 0
    while True:
        limit = counts.limit_after(s, size)
        if limit > n:
            out.append((s, n, False))
            return out
        e = -1
        for lv in levels:
            b = lv.last_in(lo, limit - 1)
            tries = 0
            while b >= 0 and count(s, b) > size:
                tries += 1
                hi = b - 1
                if tries >= _WALK:  # many misses in a long unit: bisect for the reach
                    hi = _last_fitting(count, s, size, lo, b)
                b = lv.last_in(lo, hi)
            if b >= 0:
                e = b
                break
        if e < 0:
            if s < lo:  # the overlap left no room for new text: start this chunk unoverlapped
                s = lo
                continue
            e = n
            for lv in levels:
                b = lv.first_after(lo)
                if 0 <= b < e:
                    e = b
            out.append((s, e, count(s, e) > size))
        else:
            out.append((s, e, False))
        if e >= n:
            return out
        nxt = e
        if overlap:
            floor = counts.limit_before(e, overlap)
            first = floor + 1 if floor > s else s + 1
            for lv in overlap_levels:
                b = lv.first_in(first, nxt)
                tries = 0
                while b >= 0 and count(b, e) > overlap:
                    tries += 1
                    after = b + 1
                    if tries >= _WALK:
                        after = _first_fitting(count, e, overlap, b, nxt)
                    b = lv.first_in(after, nxt)
                if b >= 0:
                    nxt = b
        s, lo = nxt, e


def _last_fitting(count: Callable[[int, int], int], s: int, size: int, lo: int, b: int) -> int:
    """The last ``x`` in ``(lo, b)`` with ``count(s, x) <= size`` found by bisection (``lo``
    when none is found): a bound to resume a search from, not an answer."""
    good, bad = lo, b
    while bad - good > 1:
        mid = (good + bad) // 2
        if count(s, mid) <= size:
            good = mid
        else:
            bad = mid
    return good


def _first_fitting(count: Callable[[int, int], int], e: int, budget: int, b: int, stop: int) -> int:
    """The first ``x`` in ``(b, stop)`` with ``count(x, e) <= budget`` found by bisection
    (``stop`` when none is found): where to resume the overlap search."""
    bad, good = b, stop
    while good - bad > 1:
        mid = (good + bad) // 2
        if count(mid, e) <= budget:
            good = mid
        else:
            bad = mid
    return good


def _overlap_start(
    text: str,
    word_levels: Sequence[Level],
    char_levels: Sequence[Level],
    s: int,
    e: int,
    overlap: int,
    length: LengthFunction,
) -> int:
    """The earliest boundary in ``(s, e)`` whose tail ``text[b:e]`` is within ``overlap``."""

    def tail_fits(b: int) -> bool:
        return length(text[b:e]) <= overlap

    for group in (word_levels, char_levels):
        if not group:
            continue
        if group is char_levels:
            # character boundaries: every offset in (s, e) that its level allows
            cands = sorted({b for lv in group for b in _range_of(lv, s, e)})
        else:
            merged: set[int] = set()
            for lv in group:
                bl = lv.boundaries()
                merged.update(bl[bisect_right(bl, s) : bisect_left(bl, e)])
            cands = sorted(merged)
        # tail length shrinks as b grows: find the first candidate whose tail fits
        lo_i, hi_i = 0, len(cands)
        while lo_i < hi_i:
            mid = (lo_i + hi_i) // 2
            if tail_fits(cands[mid]):
                hi_i = mid
            else:
                lo_i = mid + 1
        if lo_i < len(cands):
            return cands[lo_i]
    return e


def _range_of(level: Level, s: int, e: int) -> list[int]:
    if level.char and not level.mask_starts:
        return list(range(s + 1, e))
    bl = level.boundaries()
    return bl[bisect_right(bl, s) : bisect_left(bl, e)]


def separator_levels(
    text: str, separators: Sequence[str], *, is_separator_regex: bool = False
) -> list[Level]:
    """One level per separator, most preferred first; ``""`` is the character level."""
    levels: list[Level] = []
    for sep in separators:
        if sep == "":
            levels.append(chars(text))
        elif is_separator_regex:  # a user's pattern: matched under a time limit
            levels.append(points(text, pattern_points(text, sep)))
        else:
            levels.append(literal(text, sep))
    return levels


@lru_cache(maxsize=64)
def _literal_plan(
    separators: tuple[str, ...],
) -> tuple[list[tuple[str, int]], list[tuple[str, int]], list[tuple[str, int]]]:
    """``(separator, length)`` pairs: all, the non-empty ones, and the minimal ones the
    overlap search needs (worked out once per separator list, not once per document)."""
    seps = [(sep, len(sep)) for sep in separators]
    words = [(sep, k) for sep, k in seps if k]
    tail = [(a, k) for a, k in words if not any(b != a and a.endswith(b) for b, _ in words)]
    return seps, words, tail


@lru_cache(maxsize=64)
def _ascii_plan(
    separators: tuple[str, ...],
) -> tuple[list[tuple[str, int]], list[tuple[str, int]], list[tuple[str, int]]]:
    """``_literal_plan`` without the separators an ASCII text cannot contain."""
    return tuple(  # type: ignore[return-value]
        [(sep, k) for sep, k in part if sep.isascii()] for part in _literal_plan(separators)
    )


def _pack_literals(
    text: str,
    separators: Sequence[str],
    size: int,
    overlap: int,
    fits: Any = False,
    oversized: Any = True,
) -> list[tuple[int, int, Any]]:
    """``_pack_chars`` specialised to literal separators: the same spans, inlined ``rfind``.

    For the overlap search a separator that ends with another listed separator adds nothing
    (its boundaries are a subset of the other's), so only the minimal ones are searched.
    The third item of each span is ``fits`` or ``oversized`` (a flag by default; a caller
    building chunks passes their metadata instead, saving a tuple per chunk).
    """
    n = len(text)
    seps, words, tail = _literal_plan(tuple(separators))
    char_overlap = not words
    if not text.isascii():  # e.g. CJK full stops: skip the separators this text lacks
        seps = [(sep, k) for sep, k in seps if sep.isascii() or sep in text]
        words = [(sep, k) for sep, k in words if sep.isascii() or sep in text]
        tail = [(sep, k) for sep, k in tail if sep.isascii() or sep in text]
    else:
        seps, words, tail = _ascii_plan(tuple(separators))
    rfind, find = text.rfind, text.find
    tail = tail[::-1]  # the last listed (spaces) are the commonest: an early answer ends it
    # (separator, its length, how far before lo an occurrence ending after lo may start)
    plan = [(sep, k, k - 1) for sep, k in seps]
    out: list[Span] = []
    append = out.append
    s = lo = 0
    while True:
        hi = s + size
        if hi >= n:
            append((s, n, fits))
            return out
        e = -1
        for sep, k, back in plan:
            if k:
                m = rfind(sep, lo - back if lo > back else 0, hi)
                if m >= 0:
                    e = m + k
                    break
            else:  # the character level: hi < n and hi > lo
                e = hi
                break
        if e < 0:
            if s < lo:
                s = lo
                continue
            e = n
            for sep, k in words:
                a = hi - k + 1
                m = find(sep, a if a > 0 else 0, n - 1)
                if m >= 0 and m + k < e:
                    e = m + k
            append((s, e, oversized))
        else:
            append((s, e, fits))
        if e >= n:
            return out
        nxt = e
        if overlap:
            start = e - overlap
            if start <= s:
                start = s + 1
            if start < e:
                for sep, k in tail:  # the earliest boundary at or after start, of any of them
                    m = find(sep, start - k if start > k else 0, nxt - 1)
                    if m >= 0:
                        nxt = m + k
                        if nxt == start:  # none can be earlier
                            break
                if char_overlap:
                    nxt = start
        s, lo = nxt, e


def recursive_spans(
    text: str,
    chunk_size: int,
    chunk_overlap: int = 0,
    separators: Sequence[str] = ("\n\n", "\n", " ", ""),
    *,
    is_separator_regex: bool = False,
    length: LengthFunction | None = None,
    markers: tuple[Any, Any] = (False, True),
) -> list[Span]:
    """Recursive-character splitting: prefer the earliest separator that yields a cut.

    ``markers`` replace the ``(False, True)`` oversized flags of character-counted spans
    (e.g. by the chunks' metadata: ``None`` and ``{"oversized": True}``).
    """
    if not text:
        return []
    if length is None and not is_separator_regex:
        return _pack_literals(text, separators, chunk_size, chunk_overlap, *markers)
    levels = separator_levels(text, separators, is_separator_regex=is_separator_regex)
    overlap_levels = None
    if chunk_overlap and not is_separator_regex:  # the separators the overlap search needs
        tail = {sep for sep, _ in _literal_plan(tuple(separators))[2]}
        overlap_levels = [lv for sep, lv in zip(separators, levels, strict=True) if sep in tail]
    spans = pack(
        text, levels, chunk_size, chunk_overlap, length, overlap_levels=overlap_levels or None
    )
    if markers != (False, True):
        fits, oversized = markers
        return [(a, b, oversized if big else fits) for a, b, big in spans]
    return spans
