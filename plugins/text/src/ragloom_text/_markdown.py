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
from collections.abc import Callable, Sequence
from itertools import chain
from operator import methodcaller, sub
from typing import Any, NamedTuple

from ragloom_text._levels import Level, chars, literal, ranked
from ragloom_text._spans import SliceCounts, Span, pack, slice_counts

__all__ = ["Heading", "MarkdownStructure", "markdown_levels", "markdown_spans", "parse_markdown"]

_FENCES = (re.compile(r"(```+)([^\n]*)"), re.compile(r"(~~~+)([^\n]*)"))
_FRONT_MATTER = re.compile(r"---[ \t]*\r?\n(?:[^\n]*\n)*?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)")
_ATX_FIRST = re.compile(r"(#{1,6})(?:[ \t]([^\n]*)|(?=\r?\n|\r?\Z))")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
# Every alternative after the "\n" opens with a literal, which the regex engine tests before
# trying the alternative: most line starts are rejected at one character. An ATX heading's
# level is 1 + len(group 1).
_LINE_MARKS = re.compile(r"\n(?:#(#{0,5})(?:[ \t]([^\n]*)|(?=\r?\n|\r?\Z))|===|---)")
_SETEXT_LINE = re.compile(r"(?:=+|-+)[ \t]*\r?")
_NOT_SETEXT_TEXT = re.compile(r"[ \t]{4}|[ \t]*(?:[-*+>|#]|\d+[.)]|`{3}|~{3}|={3}|-{3})")
_DELIMITER_HINT = re.compile(r"\|[ \t]*:?-")
_DELIMITER_ROW = re.compile(
    r" {0,3}(?:\|[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?"
    r"|:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?)[ \t]*\r?"
)
# "|" first (found with a plain scan), the line start checked behind it: cheaper than trying a
# match at every "\n"
_PIPE_ROWS = re.compile(r"\|(?<=\n\|)[^\n]*(?:\n\|[^\n]*)+")
_PIPE_ROWS_FIRST = re.compile(r"\|[^\n]*(?:\n\|[^\n]*)+")
_BLANK_AFTER = re.compile(r"\n[ \t\r]*(?:\n|\Z)")
_START = methodcaller("start")  # a match's start, as a sort key


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


def _inside(bounds: list[int], pos: int) -> int:
    """Whether ``pos`` lies in ``[start, end)`` of one of the sorted, disjoint regions whose
    edges are ``bounds`` (``[start0, end0, start1, end1, ...]``): an odd number of edges at or
    before ``pos`` (a region ending where the next starts counts twice, as it should)."""
    return bisect_right(bounds, pos) & 1


def _fences(text: str) -> list[tuple[int, int]]:
    n = len(text)
    regions: list[tuple[int, int]] = []
    pos = 0
    if text.startswith("---"):
        fm = _FRONT_MATTER.match(text)
        if fm:
            regions.append((0, fm.end()))
            pos = fm.end()
    # one-character membership tests are memchr calls: far cheaper than a search
    found = [p.finditer(text, pos) for c, p in zip("`~", _FENCES, strict=True) if c in text]
    # A mark's match runs to the end of its line, so each line holds at most one mark and the
    # matches of one pattern come in line order; only with both kinds must they be merged.
    marks = found[0] if len(found) == 1 else sorted(chain(*found), key=_START)
    rfind = text.rfind
    open_line, open_fence = 0, ""
    for m in marks:
        start = m.start()
        line = start
        if start and text[start - 1] != "\n":  # indented, or not first on its line
            line = rfind("\n", 0, start) + 1
            if text[line:start].strip(" \t"):
                continue
        fence, rest = m.groups()
        if not open_fence:
            if fence[0] == "`" and "`" in rest:
                continue  # an inline code span, not a fence
            open_line, open_fence = line, fence
        elif fence[0] == open_fence[0] and len(fence) >= len(open_fence) and not rest.strip():
            end = m.end()  # the end of the closing line, before its newline (or the text's end)
            regions.append((open_line, end + 1 if end < n else n))
            open_fence = ""
    if open_fence:
        regions.append((open_line, n))
    return regions


def _tables(text: str, bounds: list[int]) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    last_row = -1
    for m in _DELIMITER_HINT.finditer(text):
        d = _line_start(text, m.start())
        if d == last_row or d == 0 or _inside(bounds, d):
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
    rows = [m.span() for m in _PIPE_ROWS.finditer(text)]
    first = _PIPE_ROWS_FIRST.match(text)
    if first:
        rows.insert(0, (0, first.end()))
    for start, end in rows:
        if not _inside(bounds, start):
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


def _headings(text: str, bounds: list[int]) -> list[Heading]:
    found: list[Heading] = []
    underlines: list[int] = []
    closing = False  # a title ends with "#": maybe a closing sequence ("## Title ##")
    first = _ATX_FIRST.match(text)
    if first and not (bounds and _inside(bounds, 0)):
        title = (first.group(2) or "").strip()
        found.append((0, first.end(1), title))
        closing = title.endswith("#")
    for m in _LINE_MARKS.finditer(text):  # ATX headings and setext underlines, one pass
        more, title = m.groups()
        if more is None:
            underlines.append(m.start() + 1)
            continue
        a = m.start() + 1
        if bounds and bisect_right(bounds, a) & 1:  # in code, front matter or a table
            continue  # (_inside, inlined)
        if title:
            title = title.strip()
            if title[-1:] == "#":
                closing = True
        else:
            title = ""
        found.append((a, len(more) + 1, title))  # "#" and ``more``
    if closing:
        found = [(a, b, _atx_text(t)) for a, b, t in found]
    setext = False
    for u in underlines:
        u_end = text.find("\n", u)
        if not _SETEXT_LINE.fullmatch(text, u, len(text) if u_end < 0 else u_end):
            continue
        t = _line_start(text, u - 1)
        line = text[t : u - 1]
        if not line.strip() or _NOT_SETEXT_TEXT.match(line) or _inside(bounds, t):
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


def _parse(text: str) -> tuple[MarkdownStructure, list[int]]:
    """``parse_markdown``, and the regions' edges in order (``[start0, end0, start1, ...]``)."""
    # one-character membership tests are memchr calls: they skip whole searches cheaply
    regions = _fences(text) if "`" in text or "~" in text or text.startswith("-") else []
    if "|" in text:
        tables = _tables(text, list(chain.from_iterable(regions)))
        if tables:
            regions = _merge(regions + tables)
    bounds = list(chain.from_iterable(regions))
    return MarkdownStructure(_headings(text, bounds), regions), bounds


def parse_markdown(text: str) -> MarkdownStructure:
    """Find headings, fenced code blocks, front matter and tables."""
    return _parse(text)[0]


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
    counts: SliceCounts | None = None,
) -> _Plan:
    n = len(text)
    headings, regions = structure
    inner = headings[1:] if headings and headings[0][0] == 0 else headings
    if not regions:
        return _Plan([h[0] for h in inner], [h[1] for h in inner], _NONE, _NO_REGIONS, _NO_REGIONS)
    if length is None:
        small = [(a, b) for a, b in regions if b - a <= chunk_size]
    elif counts is not None:
        small = [(a, b) for a, b in regions if counts.count(a, b) <= chunk_size]
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
    text: str,
    paths: _Paths,
    edges: list[int],
    small: tuple[list[int], list[int]],
    protected: tuple[list[int], list[int]],
    size: int,
    overlap: int,
) -> list[tuple[int, int, dict[str, Any]]] | None:
    """The character-count packer with the Markdown levels inlined (``pack`` with
    ``_plan_levels``, without a call per level per chunk) and the heading paths attached as
    ``_attach_paths`` does. ``None`` when an atom exceeds the limit: the generic packer
    handles that rare case.

    ``paths`` is ``_heading_paths``; ``small`` and ``protected`` are the ``(starts, ends)``
    of the blocks that fit (never cut inside) and of all blocks (never cut at a sentence
    inside), as in ``_Plan``; ``edges`` are all the blocks' edges in order (duplicates, 0 and
    ``len(text)`` allowed: only the last edge in a window ``(lo, h]`` with ``h < len(text)``
    is ever used).

    The chunk start ``s``, the window's lower end ``lo`` and the chunk end ``e`` only grow, so
    cursors follow them instead of a ``bisect`` per chunk: ``hk`` (headings ``at[hk:]`` lie
    after ``lo``), ``ks`` (headings ``at[:ks]`` lie at or before ``s``), ``ie`` (edges
    ``edges[ie:]`` lie after ``lo``), ``js`` (small blocks ``[js:]`` end after ``lo``) and
    ``kb`` (small blocks ``[:kb]`` start before ``e``). Most windows hold no heading, no edge
    and no small block, which then costs one comparison each.
    """
    n = len(text)
    at, depth_of, titles, parents = paths
    nh = len(at)
    rfind, find = text.rfind, text.find
    ss, se = small
    nss = len(ss)
    ps, pe = protected
    ned = len(edges)
    has_cr = "\r" in text
    out: list[tuple[int, int, dict[str, Any]]] = []
    append = out.append
    s = lo = 0
    hk = bisect_right(at, 0)  # a heading at 0 never ends a chunk
    ie = js = kb = ks = 0
    while True:
        hi = s + size
        if hi >= n:
            e = n
        elif hk < nh and at[hk] <= hi:  # headings in (lo, hi]: the farthest shallowest
            i1 = bisect_right(at, hi, hk + 1)
            if i1 - hk == 1:
                e = at[hk]
                hk += 1
            else:
                window = depth_of[hk:i1]
                hk = i1 - window[::-1].index(min(window))
                e = at[hk - 1]
        else:  # blocks: after a blank line, or at the edge of a protected block
            while ie < ned and edges[ie] <= lo:
                ie += 1
            while js < nss and se[js] <= lo:
                js += 1
            h = hi
            while True:
                m = rfind("\n\n", lo - 1 if lo > 1 else 0, h)
                e = m + 2 if m >= 0 else -1
                if has_cr:
                    m = rfind("\n\r\n", lo - 2 if lo > 2 else 0, h)
                    if m >= 0 and m + 3 > e:
                        e = m + 3
                if ie < ned and edges[ie] <= h:  # an edge in (lo, h]: the last one
                    x = edges[bisect_right(edges, h, ie) - 1]
                    if x > e:
                        e = x
                # e > lo; blocks before js end at or before lo, so cannot hold it
                if e < 0 or js == nss or ss[js] >= e:
                    break
                j = bisect_left(ss, e, js) - 1
                if e >= se[j]:
                    break
                h = ss[j]  # inside a block that must stay whole: look before it
            if e < 0:  # line ends (inlined _last)
                h = hi
                while True:
                    m = rfind("\n", lo, h)
                    if m < 0:
                        break
                    e = m + 1
                    if js == nss or ss[js] >= e:
                        break
                    j = bisect_left(ss, e, js) - 1
                    if e >= se[j]:
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
                                if s < lo:  # the overlap left no room: no overlap here
                                    s = lo
                                    continue
                                return None
        # the heading path of the deepest section holding [s, e) (as _attach_paths); the
        # headings at or before s are at[:ks]
        while ks < nh and at[ks] <= s:
            ks += 1
        if ks == 0:
            append((s, e, {"headings": []}))
        elif ks == nh or at[ks] >= e:  # no heading inside: the path at s
            append((s, e, {"headings": list(titles[ks - 1])}))
        elif ks + 1 == nh or at[ks + 1] >= e:  # one heading inside: what it leaves open
            append((s, e, {"headings": list(parents[ks])}))
        else:  # several: what the shallowest leaves open
            window = depth_of[ks : bisect_right(at, e - 1, ks)]
            append((s, e, {"headings": list(parents[ks + window.index(min(window))])}))
        if e >= n:
            return out
        nxt = e
        if overlap:  # start at the earliest space or line end in [start, e), if any
            start = e - overlap
            if start <= s:
                start = s + 1
            if start < e:
                while kb < nss and ss[kb] < e:
                    kb += 1
                if kb == 0 or se[kb - 1] <= start:  # no masked interior meets [start, e)
                    m = find(" ", start - 1, e - 1)
                    if m >= 0:
                        nxt = m + 1
                    m = find("\n", start - 1, nxt - 1)
                    if m >= 0:
                        nxt = m + 1
                elif ss[kb - 1] < start:  # one block covers [start, its end): search after it
                    h = se[kb - 1] - 1
                    m = find(" ", h, e - 1)
                    if m >= 0:
                        nxt = m + 1
                    m = find("\n", h, nxt - 1)
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
                # A small block that starts at e and reaches past the next window would mask
                # all of it, and the next chunk would restart at e without overlap (see the
                # character level above): skip that doomed search.
                if kb < nss and ss[kb] == e and nxt < e and se[kb] > nxt + size:
                    nxt = e
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
    structure, bounds = _parse(text)
    paths = _heading_paths(structure.headings)
    if length is None:
        regions = structure.regions
        if regions:
            starts, ends = bounds[::2], bounds[1::2]
            if max(map(sub, ends, starts)) <= chunk_size:
                small = (starts, ends)
            else:
                small = (
                    [a for a, b in regions if b - a <= chunk_size],
                    [b for a, b in regions if b - a <= chunk_size],
                )
            found = _pack_chars(
                text, paths, bounds, small, (starts, ends), chunk_size, chunk_overlap
            )
        else:
            found = _pack_chars(
                text, paths, _NONE, _NO_REGIONS, _NO_REGIONS, chunk_size, chunk_overlap
            )
        if found is not None:
            return found
    counts = slice_counts(length, text)
    levels, overlap_levels = _plan_levels(text, _plan(text, structure, chunk_size, length, counts))
    spans = pack(
        text, levels, chunk_size, chunk_overlap, length, overlap_levels=overlap_levels,
        counts=counts,
    )  # fmt: skip
    return _attach_paths(spans, paths)


_Paths = tuple[Sequence[int], Sequence[int], list[tuple[str, ...]], list[tuple[str, ...]]]


def _heading_paths(headings: list[Heading]) -> _Paths:
    """Per heading: its line start, its depth, its path (titles, outermost first) and the
    path it leaves open (its parent's path: the sections it does not close)."""
    if not headings:
        return (), (), [], []
    at, depth_of, names = zip(*headings, strict=True)  # tuples, built in C
    titles: list[tuple[str, ...]] = []
    parents: list[tuple[str, ...]] = []
    trail: list[int] = []  # indices of the open sections
    for i, level in enumerate(depth_of):
        while trail and depth_of[trail[-1]] >= level:
            trail.pop()
        if trail:
            parents.append(titles[trail[-1]])
            titles.append(titles[trail[-1]] + (names[i],))
        else:
            parents.append(())
            titles.append((names[i],))
        trail.append(i)
    return at, depth_of, titles, parents


def _attach_paths(spans: list[Span], paths: _Paths) -> list[tuple[int, int, dict[str, Any]]]:
    """``(start, end, metadata)``: the heading path of the deepest section holding the span.

    A heading inside the span closes every open section of its depth or deeper, and depths
    grow along a path, so the sections still open are a prefix of the path at the start: the
    sections its shallowest heading inside leaves open (its parent's path).
    """
    at, depth_of, titles, parents = paths
    out: list[tuple[int, int, dict[str, Any]]] = []
    for start, end, oversized in spans:
        i = bisect_right(at, start) - 1
        j = bisect_right(at, end - 1)
        if i < 0:
            path: list[str] = []
        elif j == i + 1:
            path = list(titles[i])
        else:
            window = depth_of[i + 1 : j]
            path = list(parents[i + 1 + window.index(min(window))])
        meta: dict[str, Any] = {"headings": path}
        if oversized:
            meta["oversized"] = True
        out.append((start, end, meta))
    return out
