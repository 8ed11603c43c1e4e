"""Invariant checks and a reference packer shared by the ragloom-text tests.

The checks cost a few operations per chunk (never per character), so they run on the 20 MB
corpus as well as on generated text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Length = Callable[[str], int] | None


def measure(text: str, start: int, end: int, length: Length) -> int:
    return end - start if length is None else length(text[start:end])


def check_spans(
    text: str,
    spans: Sequence[tuple[int, int, Any]],
    chunk_size: int,
    chunk_overlap: int,
    length: Length = None,
    *,
    where: str = "",
) -> None:
    """Assert the chunk invariants of ragloom-text on ``(start, end, oversized_or_meta)``."""
    n = len(text)
    if n == 0:
        assert spans == [], f"{where}: empty text gave chunks"
        return
    assert spans, f"{where}: non-empty text gave no chunks"
    assert spans[0][0] == 0, f"{where}: first chunk starts at {spans[0][0]}"
    assert spans[-1][1] == n, f"{where}: last chunk ends at {spans[-1][1]}, text has {n}"
    prev_s = prev_e = -1
    for i, (s, e, extra) in enumerate(spans):
        oversized = extra.get("oversized", False) if isinstance(extra, dict) else bool(extra)
        assert 0 <= s < e <= n, f"{where}: chunk {i} has bad span [{s}, {e})"
        if not oversized:
            size = measure(text, s, e, length)
            assert size <= chunk_size, f"{where}: chunk {i} [{s}, {e}) has size {size}"
        if i:
            assert s > prev_s and e > prev_e, f"{where}: chunk {i} does not advance"
            assert s <= prev_e, f"{where}: gap before chunk {i}: [{prev_e}, {s})"
            if chunk_overlap == 0:
                assert s == prev_e, f"{where}: chunk {i} overlaps with overlap 0"
            else:
                shared = measure(text, s, prev_e, length)
                assert shared <= chunk_overlap, f"{where}: chunk {i} overlaps by {shared}"
        prev_s, prev_e = s, e


def literal_boundaries(text: str, sep: str) -> set[int]:
    """Naively: the ends of every occurrence of ``sep`` (overlapping ones too) inside (0, n)."""
    n = len(text)
    if sep == "":
        return set(range(1, n))
    k = len(sep)
    return {m + k for m in range(n) if text.startswith(sep, m) and m + k < n}


def reference_pack(
    text: str,
    levels: Sequence[tuple[set[int], bool]],
    chunk_size: int,
    chunk_overlap: int,
    length: Callable[[str], int] = len,
) -> list[tuple[int, int, bool]]:
    """The packing rule of ragloom-text, written as plainly as possible.

    ``levels``: ``(boundary set, is_character_level)``, most preferred first.
    """
    n = len(text)
    if n == 0:
        return []
    out: list[tuple[int, int, bool]] = []
    words = [b for b, is_char in levels if not is_char]
    overlap_sets = words or [b for b, is_char in levels if is_char]
    s = lo = 0
    while True:
        if length(text[s:n]) <= chunk_size:
            out.append((s, n, False))
            return out
        e = -1
        for bset, _ in levels:
            fitting = [b for b in bset if b > lo and length(text[s:b]) <= chunk_size]
            if fitting:
                e = max(fitting)
                break
        if e < 0:
            if s < lo:
                s = lo
                continue
            after = [b for bset, _ in levels for b in bset if b > lo]
            e = min(after) if after else n
            out.append((s, e, True))
        else:
            out.append((s, e, False))
        if e >= n:
            return out
        nxt = e
        if chunk_overlap:
            starts = [
                b
                for bset in overlap_sets
                for b in bset
                if s < b < e and length(text[b:e]) <= chunk_overlap
            ]
            if starts:
                nxt = min(starts)
        s, lo = nxt, e
