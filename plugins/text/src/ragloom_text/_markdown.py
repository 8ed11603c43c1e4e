"""Markdown structure (headings, fenced code, tables) and the Markdown splitting built on it.

Boundaries, most preferred first: heading starts by depth (``#`` before ``##`` ...), block
boundaries (after a blank line, and the edges of fenced code blocks and tables), line ends,
sentence ends, spaces, characters. Fenced code blocks (and YAML front matter) and tables are
*protected*: no boundary falls strictly inside one, unless the block alone exceeds the limit;
then it is cut at line ends, and only a line longer than the limit is cut at spaces, then
characters. Each span carries the heading path of the deepest section that contains all of it.

The structure is found with whole-document searches whose patterns start with a literal
(``"\\n#"``, ``"```"``, ...), so the regex engine skips ahead in C: ATX headings, setext
underlines and pipe-table rows are recognised at the start of a line (column 0); fences may be
indented.

Nothing here imports ragloom.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any, NamedTuple

from ragloom_text._levels import Level, chars, literal, ranked
from ragloom_text._spans import Span, pack

__all__ = ["Heading", "MarkdownStructure", "markdown_levels", "markdown_spans", "parse_markdown"]

_FENCES = (re.compile(r"(```+)([^\n]*)"), re.compile(r"(~~~+)([^\n]*)"))
_FRONT_MATTER = re.compile(r"---[ \t]*\r?\n(?:[^\n]*\n)*?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)")
_ATX_FIRST = re.compile(r"(#{1,6})(?:[ \t]([^\n]*)|(?=\r?\n|\r?\Z))")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_LINE_MARKS = re.compile(r"\n(?:(#{1,6})(?:[ \t]([^\n]*)|(?=\r?\n|\r?\Z))|===|---)")
_SETEXT_LINE = re.compile(r"(?:=+|-+)[ \t]*\r?")
_NOT_SETEXT_TEXT = re.compile(r"[ \t]{4}|[ \t]*(?:[-*+>|#]|\d+[.)]|`{3}|~{3}|={3}|-{3})")
_DELIMITER_HINT = re.compile(r"\|[ \t]*:?-")
_DELIMITER_ROW = re.compile(
    r" {0,3}(?:\|[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?"
    r"|:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?)[ \t]*\r?"
)
_PIPE_ROWS = re.compile(r"\n\|[^\n]*(?:\n\|[^\n]*)+")
_PIPE_ROWS_FIRST = re.compile(r"\|[^\n]*(?:\n\|[^\n]*)+")
_BLANK_AFTER = re.compile(r"\n[ \t\r]*(?:\n|\Z)")


Heading = tuple[int, int, str]
"""A heading: ``(start of its line, level 1-6, text)``."""


class MarkdownStructure(NamedTuple):
    """Headings outside code, and protected regions ``[start, end)`` (code, front matter,
    tables), sorted and non-overlapping."""

    headings: list[Heading]
    regions: list[tuple[int, int]]


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> int:
    """Offset just past the line that contains ``pos`` (its newline included)."""
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def _inside(starts: list[int], ends: list[int], pos: int) -> bool:
    """Whether ``pos`` lies in ``[start, end)`` of one of the sorted regions."""
    j = bisect_right(starts, pos) - 1
    return j >= 0 and pos < ends[j]


def _fences(text: str) -> list[tuple[int, int]]:
    regions: list[tuple[int, int]] = []
    pos = 0
    if text.startswith("---"):
        fm = _FRONT_MATTER.match(text)
        if fm:
            regions.append((0, fm.end()))
            pos = fm.end()
    marks: list[tuple[int, int, str, str]] = []  # (line start, mark start, mark, rest)
    rfind = text.rfind
    for char, pattern in zip("`~", _FENCES, strict=True):
        if char not in text:  # a one-character test is a memchr: far cheaper than a search
            continue
        for m in pattern.finditer(text, pos):
            start = m.start()
            line = start
            if start and text[start - 1] != "\n":  # indented, or not first on its line
                line = rfind("\n", 0, start) + 1
                if text[line:start].strip(" \t"):
                    continue
            marks.append((line, start, m.group(1), m.group(2)))
    marks.sort()
    opener: tuple[int, int, str, str] | None = None
    for mark in marks:
        line, _, fence, rest = mark
        if opener is None:
            if fence[0] == "`" and "`" in rest:
                continue  # an inline code span, not a fence
            opener = mark
        elif fence[0] == opener[2][0] and len(fence) >= len(opener[2]) and not rest.strip():
            regions.append((opener[0], _line_end(text, line)))
            opener = None
    if opener is not None:
        regions.append((opener[0], len(text)))
    return regions


def _tables(text: str, starts: list[int], ends: list[int]) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    last_row = -1
    for m in _DELIMITER_HINT.finditer(text):
        d = _line_start(text, m.start())
        if d == last_row or d == 0 or _inside(starts, ends, d):
            continue
        last_row = d
        row_end = text.find("\n", d)
        row_end = len(text) if row_end < 0 else row_end
        if not _DELIMITER_ROW.fullmatch(text, d, row_end):
            continue
        header_start = _line_start(text, d - 1)
        header = text[header_start : d - 1]
        if "|" not in header or not header.strip():
            continue
        blank = _BLANK_AFTER.search(text, row_end)
        found.append((header_start, blank.start() + 1 if blank else len(text)))
    rows = [(m.start() + 1, m.end()) for m in _PIPE_ROWS.finditer(text)]
    first = _PIPE_ROWS_FIRST.match(text)
    if first:
        rows.insert(0, (0, first.end()))
    for start, end in rows:
        if not _inside(starts, ends, start):
            found.append((start, _line_end(text, end)))
    return found


def _merge(regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(regions):
        if out and start < out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _atx_text(raw: str) -> str:
    text = raw.strip()
    if text.endswith("#"):
        text = _ATX_CLOSING.sub("", text).strip()
    return text


def _headings(text: str, starts: list[int], ends: list[int]) -> list[Heading]:
    found: list[Heading] = []
    underlines: list[int] = []
    for m in _LINE_MARKS.finditer(text):  # ATX headings and setext underlines, one pass
        a, b = m.span(1)
        if a >= 0:
            found.append((a, b - a, (m.group(2) or "").strip()))
        else:
            underlines.append(m.start() + 1)
    first = _ATX_FIRST.match(text)
    if first:
        found.insert(0, (0, first.end(1), (first.group(2) or "").strip()))
    if starts:
        found = [h for h in found if not _inside(starts, ends, h[0])]
    if any(t.endswith("#") for _, _, t in found):  # closing sequences: "## Title ##"
        found = [(a, b, _atx_text(t)) for a, b, t in found]
    setext = False
    for u in underlines:
        u_end = text.find("\n", u)
        if not _SETEXT_LINE.fullmatch(text, u, len(text) if u_end < 0 else u_end):
            continue
        t = _line_start(text, u - 1)
        line = text[t : u - 1]
        if not line.strip() or _NOT_SETEXT_TEXT.match(line) or _inside(starts, ends, t):
            continue
        if t > 0:  # the title must open a paragraph: a blank line (or a rule) before it
            before = text[_line_start(text, t - 1) : t - 1].strip()
            if before and not (set(before) <= {"="} or set(before) <= {"-"}):
                continue
        found.append((t, 1 if text[u] == "=" else 2, line.strip()))
        setext = True
    if setext:
        found.sort()
    return found


def parse_markdown(text: str) -> MarkdownStructure:
    """Find headings, fenced code blocks, front matter and tables."""
    # one-character membership tests are memchr calls: they skip whole searches cheaply
    regions = _fences(text) if "`" in text or "~" in text or text.startswith("-") else []
    if "|" in text:
        tables = _tables(text, [a for a, _ in regions], [b for _, b in regions])
        if tables:
            regions = _merge(regions + tables)
    if not regions:
        return MarkdownStructure(_headings(text, _NONE, _NONE), regions)
    starts = [a for a, _ in regions]
    ends = [b for _, b in regions]
    return MarkdownStructure(_headings(text, starts, ends), regions)


_NONE: list[int] = []


class _Plan(NamedTuple):
    """Everything the packers need: the boundary sets of a Markdown text, in the shapes that
    both the inline character packer and the ``Level`` objects read."""

    heading_at: list[int]
    heading_rank: list[int]
    edges: list[int]  # where protected blocks start and end
    small: tuple[list[int], list[int]]  # blocks that fit: never cut inside
    protected: tuple[list[int], list[int]]  # all blocks: never cut at a sentence inside


_NO_REGIONS: tuple[list[int], list[int]] = ([], [])
_BLOCK_SEPS = ("\n\n", "\n\r\n")  # a block ends after a blank line
_SENTENCE_SEPS = (". ", "! ", "? ")


def _plan(
    text: str,
    structure: MarkdownStructure,
    chunk_size: int,
    length: Callable[[str], int] | None,
) -> _Plan:
    n = len(text)
    headings, regions = structure
    inner = headings[1:] if headings and headings[0][0] == 0 else headings
    if not regions:
        return _Plan([h[0] for h in inner], [h[1] for h in inner], _NONE, _NO_REGIONS, _NO_REGIONS)
    if length is None:
        small = [(a, b) for a, b in regions if b - a <= chunk_size]
    else:
        small = [(a, b) for a, b in regions if length(text[a:b]) <= chunk_size]
    return _Plan(
        heading_at=[h[0] for h in inner],
        heading_rank=[h[1] for h in inner],
        edges=sorted({x for region in regions for x in region if 0 < x < n}),
        small=([a for a, _ in small], [b for _, b in small]),
        protected=([a for a, _ in regions], [b for _, b in regions]),
    )


def _plan_levels(text: str, plan: _Plan) -> tuple[list[Level], list[Level]]:
    levels: list[Level] = []
    if plan.heading_at:
        levels.append(ranked(text, plan.heading_at, plan.heading_rank))
    block = Level(text, seps=_BLOCK_SEPS, points=plan.edges)
    line, space, char = literal(text, "\n"), literal(text, " "), chars(text)
    sentence = literal(text, *_SENTENCE_SEPS)
    if plan.small[0]:
        block, line, space, char = (lv.masked(*plan.small) for lv in (block, line, space, char))
    if plan.protected[0]:
        sentence = sentence.masked(*plan.protected)
    levels += [block, line, sentence, space, char]
    return levels, [line, space]


def markdown_levels(
    text: str,
    structure: MarkdownStructure,
    chunk_size: int,
    length: Callable[[str], int] | None = None,
) -> tuple[list[Level], list[Level]]:
    """The boundary levels of a Markdown text (most preferred first), and the two levels
    whose union holds all the others' separator boundaries (for the overlap search)."""
    return _plan_levels(text, _plan(text, structure, chunk_size, length))


def _last(
    rfind: Callable[[str, int, int], int],
    seps: tuple[str, ...],
    lo: int,
    hi: int,
    starts: list[int],
    ends: list[int],
) -> int:
    """The farthest end of one of ``seps`` in ``(lo, hi]`` outside the masked interiors."""
    while True:
        best = -1
        for sep in seps:
            k = len(sep)
            a = lo - k + 1
            m = rfind(sep, a if a > 0 else 0, hi)
            if m >= 0 and m + k > best:
                best = m + k
        if best < 0 or not starts:
            return best
        j = bisect_left(starts, best) - 1
        if j < 0 or best >= ends[j]:
            return best
        hi = starts[j]


def _pack_chars(
    text: str, plan: _Plan, paths: _Paths, size: int, overlap: int
) -> list[tuple[int, int, dict[str, Any]]] | None:
    """The character-count packer with the Markdown levels inlined (``pack`` with
    ``_plan_levels``, without a call per level per chunk) and the heading paths attached as
    ``_attach_paths`` does. ``None`` when an atom exceeds the limit: the generic packer
    handles that rare case."""
    n = len(text)
    at, depth_of, titles, depths = paths
    last = len(at) - 1
    rfind, find = text.rfind, text.find
    hpos, hrank, edges = plan.heading_at, plan.heading_rank, plan.edges
    ss, se = plan.small
    ps, pe = plan.protected
    has_cr = "\r" in text
    out: list[tuple[int, int, dict[str, Any]]] = []
    append = out.append
    s = lo = 0
    while True:
        hi = s + size
        e = -1
        if hi >= n:
            e = n
        elif hpos:
            i1 = bisect_right(hpos, hi)
            i0 = bisect_right(hpos, lo)
            if i1 > i0:
                if i1 - i0 == 1:
                    e = hpos[i0]
                else:
                    window = hrank[i0:i1]
                    e = hpos[i1 - 1 - window[::-1].index(min(window))]
        if e < 0:  # blocks: after a blank line, or at the edge of a protected block
            h = hi
            while True:
                m = rfind("\n\n", lo - 1 if lo > 1 else 0, h)
                e = m + 2 if m >= 0 else -1
                if has_cr:
                    m = rfind("\n\r\n", lo - 2 if lo > 2 else 0, h)
                    if m >= 0 and m + 3 > e:
                        e = m + 3
                if edges:
                    i = bisect_right(edges, h) - 1
                    if i >= 0 and edges[i] > lo and edges[i] > e:
                        e = edges[i]
                if e < 0 or not ss:
                    break
                j = bisect_left(ss, e) - 1
                if j < 0 or e >= se[j]:
                    break
                h = ss[j]
        if e < 0:  # line ends (inlined _last)
            h = hi
            while True:
                m = rfind("\n", lo, h)
                if m < 0:
                    break
                e = m + 1
                if not ss:
                    break
                j = bisect_left(ss, e) - 1
                if j < 0 or e >= se[j]:
                    break
                e = -1
                h = ss[j]
            if e < 0:
                e = _last(rfind, _SENTENCE_SEPS, lo, hi, ps, pe)
                if e < 0:
                    e = _last(rfind, (" ",), lo, hi, ss, se)
                    if e < 0:
                        e = hi  # characters
                        if ss:
                            j = bisect_left(ss, e) - 1
                            if j >= 0 and e < se[j]:
                                e = ss[j]
                        if e <= lo:
                            if s < lo:  # the overlap left no room: this chunk does not overlap
                                s = lo
                                continue
                            return None
        if at:  # the heading path of the deepest section holding [s, e) (as _attach_paths)
            i = bisect_right(at, s) - 1
            if i < 0:
                append((s, e, {"headings": []}))
            elif i == last or at[i + 1] >= e:
                append((s, e, {"headings": list(titles[i])}))
            else:
                cut = min(depth_of[i + 1 : bisect_right(at, e - 1)])
                append((s, e, {"headings": list(titles[i][: bisect_left(depths[i], cut)])}))
        else:
            append((s, e, {"headings": []}))
        if e >= n:
            return out
        nxt = e
        if overlap:  # start at the earliest space or line end in [start, e), if any
            start = e - overlap
            if start <= s:
                start = s + 1
            if start < e:
                if not ss or (j := bisect_left(ss, e) - 1) < 0 or se[j] <= start:
                    # no masked interior meets [start, e)
                    m = find(" ", start - 1, e - 1)
                    if m >= 0:
                        nxt = m + 1
                    m = find("\n", start - 1, nxt - 1)
                    if m >= 0:
                        nxt = m + 1
                else:
                    for sep in (" ", "\n"):
                        m = find(sep, start - 1, nxt - 1)
                        while m >= 0:
                            j = bisect_left(ss, m + 1) - 1
                            if j >= 0 and m + 1 < se[j]:  # inside a block that must stay whole
                                m = find(sep, se[j] - 1, nxt - 1)
                                continue
                            nxt = m + 1
                            break
        s, lo = nxt, e


def markdown_spans(
    text: str,
    chunk_size: int,
    chunk_overlap: int = 0,
    length: Callable[[str], int] | None = None,
) -> list[tuple[int, int, dict[str, Any]]]:
    """Split Markdown into exact spans with ``{"headings": [...]}`` (and ``"oversized"``)."""
    if not text:
        return []
    structure = parse_markdown(text)
    plan = _plan(text, structure, chunk_size, length)
    paths = _heading_paths(structure.headings)
    if length is None:
        found = _pack_chars(text, plan, paths, chunk_size, chunk_overlap)
        if found is not None:
            return found
    levels, overlap_levels = _plan_levels(text, plan)
    spans = pack(text, levels, chunk_size, chunk_overlap, length, overlap_levels=overlap_levels)
    return _attach_paths(spans, paths)


_Paths = tuple[list[int], list[int], list[tuple[str, ...]], list[tuple[int, ...]]]


def _heading_paths(headings: list[Heading]) -> _Paths:
    """Per heading: its line start and depth, and the titles and depths along its path."""
    at = [h[0] for h in headings]
    depth_of = [h[1] for h in headings]
    titles: list[tuple[str, ...]] = []
    depths: list[tuple[int, ...]] = []
    trail: list[int] = []  # indices of the open sections
    for i, (_, level, title) in enumerate(headings):
        while trail and depth_of[trail[-1]] >= level:
            trail.pop()
        if trail:
            titles.append(titles[trail[-1]] + (title,))
            depths.append(depths[trail[-1]] + (level,))
        else:
            titles.append((title,))
            depths.append((level,))
        trail.append(i)
    return at, depth_of, titles, depths


def _attach_paths(spans: list[Span], paths: _Paths) -> list[tuple[int, int, dict[str, Any]]]:
    """``(start, end, metadata)``: the heading path of the deepest section holding the span.

    A heading inside the span closes every open section of its depth or deeper, and depths
    grow along a path, so the sections still open are a prefix of the path at the start.
    """
    at, depth_of, titles, depths = paths
    out: list[tuple[int, int, dict[str, Any]]] = []
    for start, end, oversized in spans:
        i = bisect_right(at, start) - 1
        j = bisect_right(at, end - 1) - 1
        if i < 0:
            path: list[str] = []
        elif j == i:
            path = list(titles[i])
        else:
            path = list(titles[i][: bisect_left(depths[i], min(depth_of[i + 1 : j + 1]))])
        meta: dict[str, Any] = {"headings": path}
        if oversized:
            meta["oversized"] = True
        out.append((start, end, meta))
    return out
