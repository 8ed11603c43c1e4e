"""Semantic chunking arithmetic: sentence segmentation, adjacent-window similarity, breakpoints
and size-bounded packing into exact spans. Pure (numpy and ``re``; no model, no ragloom core).

Spans always tile the text: every character, whitespace included, belongs to exactly one
chunk (whitespace goes with the sentence before it).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "BREAKPOINT_TYPES",
    "Span",
    "breakpoint_mask",
    "pack_chunks",
    "paragraph_sentences",
    "semantic_spans",
    "sentence_spans",
    "split_oversized",
    "window_similarities",
]

#: ``(start, end, oversized)``: an exact ``[start, end)`` chunk span.
Span = tuple[int, int, bool]

BREAKPOINT_TYPES = ("percentile", "absolute")

# A sentence ends after terminal punctuation (with closing quotes/brackets) followed by
# whitespace, or at a blank line; the whitespace that follows belongs to the sentence.
_SENTENCE_END = re.compile(
    r"[.!?\u2026\u3002\uff01\uff1f]+[\"'\u201d\u2019)\]]*\s+|\n[ \t\r\f\v]*\n\s*"
)
_ATOM = re.compile(r"\S+\s*|\s+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each sentence; the spans tile ``text`` (none for an empty text)."""
    return paragraph_sentences(text)[0]


def paragraph_sentences(text: str) -> tuple[list[tuple[int, int]], list[bool]]:
    """:func:`sentence_spans`, and for each sentence whether a blank line follows it."""
    spans: list[tuple[int, int]] = []
    ends_paragraph: list[bool] = []
    if not text:
        return spans, ends_paragraph
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > start:
            spans.append((start, end))
            ends_paragraph.append(match.group().count("\n") >= 2)
            start = end
    if start < len(text):
        spans.append((start, len(text)))
        ends_paragraph.append(False)
    return spans, ends_paragraph


def window_similarities(embeddings: np.ndarray, window: int) -> np.ndarray:
    """``(n - 1,)``: cosine similarity between the ``window`` sentences before each gap and the
    ``window`` after it (sums of unit sentence vectors). A side with no content scores 1.0
    (no evidence of a topic change)."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    e = np.asarray(embeddings, dtype=np.float32)
    n = e.shape[0]
    if n < 2:
        return np.zeros(0, dtype=np.float32)
    left = e[:-1].copy()  # left[g] = sum of e[g - j] for j < window
    right = e[1:].copy()  # right[g] = sum of e[g + 1 + j] for j < window
    for j in range(1, window):
        if j >= n - 1:
            break
        left[j:] += e[: n - 1 - j]
        right[: n - 1 - j] += e[1 + j :]
    dots = np.einsum("ij,ij->i", left, right)
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    sims = np.ones(n - 1, dtype=np.float32)
    ok = norms > 0
    sims[ok] = dots[ok] / norms[ok]
    return sims


def breakpoint_mask(similarities: np.ndarray, kind: str, amount: float) -> np.ndarray:
    """Gaps to split at. ``"percentile"``: distance (1 - similarity) above the ``amount``-th
    percentile of the document's distances; ``"absolute"``: similarity below ``amount``."""
    sims = np.asarray(similarities, dtype=np.float64)
    if sims.size == 0:
        return np.zeros(0, dtype=bool)
    if kind == "percentile":
        distance = 1.0 - sims
        return np.asarray(distance > np.percentile(distance, amount), dtype=bool)
    if kind == "absolute":
        return np.asarray(sims < amount, dtype=bool)
    raise ValueError(f"breakpoint_type must be one of {BREAKPOINT_TYPES}, got {kind!r}")


def _is_joiner(ch: str) -> bool:
    """A character that must stay with the one before it (combining mark, joiner, selector)."""
    return unicodedata.combining(ch) != 0 or ch in "\u200d\ufe0e\ufe0f" or (
        "\U000e0100" <= ch <= "\U000e01ef"
    )


def _char_cut(text: str, start: int, end: int, limit: int) -> tuple[int, bool]:
    """Where a character split of ``text[start:end]`` ends its first piece (at most ``limit``
    characters unless one grapheme-like cluster is longer: then it is oversized)."""
    cut = min(start + limit, end)
    if cut == end:
        return cut, False
    back = cut
    while back > start and (_is_joiner(text[back]) or text[back - 1] == "\u200d"):
        back -= 1
    if back > start:
        return back, False
    forward = cut
    while forward < end and (_is_joiner(text[forward]) or text[forward - 1] == "\u200d"):
        forward += 1
    return forward, True


def split_oversized(text: str, start: int, end: int, chunk_size: int) -> list[Span]:
    """Split ``text[start:end]`` into pieces of at most ``chunk_size`` characters: between
    words first (whitespace stays with the word before it), then between characters (never
    inside a base character + combining marks cluster, which is kept whole and flagged)."""
    pieces: list[Span] = []
    piece_start = start
    for atom in _ATOM.finditer(text, start, end):
        a, b = atom.start(), atom.end()
        if b - piece_start <= chunk_size:
            continue
        if a > piece_start:  # close the piece before this atom
            pieces.append((piece_start, a, False))
            piece_start = a
        if b - a > chunk_size:  # the atom alone is too long: characters
            while b - piece_start > chunk_size:
                cut, oversized = _char_cut(text, piece_start, b, chunk_size)
                pieces.append((piece_start, cut, oversized))
                piece_start = cut
    if piece_start < end:
        pieces.append((piece_start, end, False))
    return pieces


def pack_chunks(
    sentences: Sequence[tuple[int, int]],
    similarities: np.ndarray,
    breaks: np.ndarray,
    text: str,
    *,
    chunk_size: int,
    min_chunk_size: int = 0,
) -> list[Span]:
    """Chunk spans from sentences, the similarity at each gap, and the breakpoint gaps.

    1. Breakpoints cut the sentences into sections.
    2. A section longer than ``chunk_size`` is cut at its least similar gap (among gaps that
       leave each side at least a quarter of it, when there are such gaps), recursively.
    3. A piece shorter than ``min_chunk_size`` joins the neighbour it is more similar to, when
       the two fit in ``chunk_size``.
    4. A single sentence longer than ``chunk_size`` is split by :func:`split_oversized`.
    """
    n = len(sentences)
    if n == 0:
        return []
    sims = np.asarray(similarities, dtype=np.float64)
    starts = np.fromiter((s for s, _ in sentences), dtype=np.int64, count=n)
    ends = np.fromiter((e for _, e in sentences), dtype=np.int64, count=n)
    cut_after = np.flatnonzero(np.asarray(breaks, dtype=bool))
    section_starts = np.concatenate(([0], cut_after + 1))
    section_ends = np.concatenate((cut_after, [n - 1]))

    ranges: list[tuple[int, int]] = []
    for a0, b0 in zip(section_starts.tolist(), section_ends.tolist(), strict=True):
        stack = [(a0, b0)]
        while stack:
            a, b = stack.pop()
            length = int(ends[b] - starts[a])
            if length <= chunk_size or a == b:
                ranges.append((a, b))
                continue
            gap_pos = ends[a:b]  # cut positions of gaps a .. b-1
            quarter = length / 4
            lo, hi = starts[a] + quarter, ends[b] - quarter
            inner = (gap_pos >= lo) & (gap_pos <= hi)
            gap_sims = sims[a:b]
            if inner.any():
                g = a + int(np.argmin(np.where(inner, gap_sims, np.inf)))
            else:
                g = a + int(np.argmin(gap_sims))
            stack.append((g + 1, b))  # popped second: keeps document order
            stack.append((a, g))

    if min_chunk_size > 0 and len(ranges) > 1:
        ranges = _merge_small(ranges, starts, ends, sims, chunk_size, min_chunk_size)

    spans: list[Span] = []
    for a, b in ranges:
        start, end = int(starts[a]), int(ends[b])
        if end - start > chunk_size:  # a single sentence that does not fit
            spans.extend(split_oversized(text, start, end, chunk_size))
        else:
            spans.append((start, end, False))
    return spans


def _merge_small(
    ranges: list[tuple[int, int]],
    starts: np.ndarray,
    ends: np.ndarray,
    sims: np.ndarray,
    chunk_size: int,
    min_chunk_size: int,
) -> list[tuple[int, int]]:
    def size(r: tuple[int, int]) -> int:
        return int(ends[r[1]] - starts[r[0]])

    out = list(ranges)
    i = 0
    while i < len(out):
        here = out[i]
        own = size(here)
        if own >= min_chunk_size:
            i += 1
            continue
        best: tuple[float, int] | None = None
        if i > 0 and size(out[i - 1]) + own <= chunk_size:
            best = (float(sims[here[0] - 1]), i - 1)
        if i + 1 < len(out) and own + size(out[i + 1]) <= chunk_size:
            after = (float(sims[here[1]]), i + 1)
            if best is None or after[0] > best[0]:
                best = after
        if best is None:
            i += 1
            continue
        j = best[1]
        lo, hi = min(i, j), max(i, j)
        out[lo : hi + 1] = [(out[lo][0], out[hi][1])]
        i = lo
    return out


def semantic_spans(
    text: str,
    encode: Callable[[list[str]], np.ndarray],
    *,
    chunk_size: int,
    breakpoint_type: str = "percentile",
    breakpoint_threshold: float = 90.0,
    window: int = 2,
    min_chunk_size: int = 0,
    paragraph_bias: float = 0.0,
    sentence_chars: int | None = 512,
) -> list[Span]:
    """The chunk spans of ``text``: sentences are embedded in one ``encode`` call, split where
    the similarity of adjacent windows drops, and packed under ``chunk_size``.

    ``paragraph_bias`` is subtracted from the similarity at gaps that are paragraph breaks
    (a blank line), so that between two nearly equal candidates the cut falls there. Only the
    first ``sentence_chars`` characters of a sentence are embedded (``None``: all): that is
    enough to place it, and long unpunctuated runs (code, tables) would otherwise dominate
    the encoding time.
    """
    sentences, paragraph_ends = paragraph_sentences(text)
    if not sentences:
        return []
    if len(sentences) == 1:
        return pack_chunks(
            sentences, np.zeros(0), np.zeros(0, dtype=bool), text, chunk_size=chunk_size
        )
    if sentence_chars is None:
        vectors = encode([text[s:e] for s, e in sentences])
    else:
        vectors = encode([text[s : min(e, s + sentence_chars)] for s, e in sentences])
    sims = window_similarities(vectors, window).astype(np.float64)
    if paragraph_bias:
        sims -= paragraph_bias * np.asarray(paragraph_ends[:-1], dtype=np.float64)
    breaks = breakpoint_mask(sims, breakpoint_type, breakpoint_threshold)
    return pack_chunks(
        sentences, sims, breaks, text, chunk_size=chunk_size, min_chunk_size=min_chunk_size
    )
