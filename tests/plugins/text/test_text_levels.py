"""The packing engine of ragloom-text against a plain reference implementation.

``ragloom_text._levels`` answers range queries over boundary sets without materialising them
and ``ragloom_text._spans`` packs with them; both are checked here against naive versions.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom_text._code import code_levels
from ragloom_text._levels import Level, chars, literal, points, ranked
from ragloom_text._markdown import markdown_levels, parse_markdown
from ragloom_text._spans import pack, recursive_spans
from ragloom_text.lengths import count_words
from text_checks import check_spans, literal_boundaries, reference_pack

ALPHABET = "ab .\n!?"
texts = st.text(alphabet=ALPHABET, max_size=80)
separator_lists = st.lists(
    st.sampled_from(["\n\n", "\n", ". ", " ", "a", "ab", "bab", "!", "?"]),
    min_size=1,
    max_size=4,
    unique=True,
)


def naive_queries(bl: list[int], lo: int, hi: int, x: int) -> tuple[int, int, int]:
    inside = [b for b in bl if lo < b <= hi]
    from_lo = [b for b in bl if lo <= b < hi]
    after = [b for b in bl if b > x]
    return (
        max(inside) if inside else -1,
        min(from_lo) if from_lo else -1,
        min(after) if after else -1,
    )


def assert_level_matches(level: Level, expected: list[int], n: int) -> None:
    assert level.boundaries() == expected
    for lo in range(0, n + 1):
        for hi in range(lo, n + 2):
            got = (level.last_in(lo, hi), level.first_in(lo, hi), level.first_after(lo))
            assert got == naive_queries(expected, lo, hi, lo), (lo, hi)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="ab \n", max_size=14), sep=st.sampled_from(["a", "ab", "aa", " ", "\n\n"])
)
def test_literal_level_answers_like_the_naive_boundary_set(text: str, sep: str) -> None:
    expected = sorted(literal_boundaries(text, sep))
    assert_level_matches(literal(text, sep), expected, len(text))


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="ab \n", min_size=1, max_size=14),
    regions=st.lists(st.tuples(st.integers(0, 14), st.integers(1, 6)), max_size=3),
    char=st.booleans(),
)
def test_masked_level_drops_exactly_the_boundaries_inside_regions(
    text: str, regions: list[tuple[int, int]], char: bool
) -> None:
    n = len(text)
    spans: list[tuple[int, int]] = []
    for start, width in sorted(regions):
        if spans and start < spans[-1][1]:
            continue
        spans.append((start, start + width))
    inner: Level = chars(text) if char else literal(text, " ")
    base = list(range(1, n)) if char else sorted(literal_boundaries(text, " "))
    expected = [b for b in base if not any(a < b < z for a, z in spans)]
    masked = inner.masked([a for a, _ in spans], [z for _, z in spans])
    assert_level_matches(masked, expected, n)


@settings(max_examples=100, deadline=None)
@given(
    text=st.text(alphabet="ab \n", max_size=14),
    extra=st.lists(st.integers(1, 13), max_size=4),
)
def test_a_level_is_the_union_of_its_separators_and_points(text: str, extra: list[int]) -> None:
    pts = sorted({p for p in extra if p < len(text)})
    expected = sorted(literal_boundaries(text, " ") | literal_boundaries(text, "ab") | set(pts))
    union = Level(text, seps=(" ", "ab"), points=pts)
    assert_level_matches(union, expected, len(text))
    lazy = Level(text, seps=(" ", "ab"), points=lambda: pts)
    assert_level_matches(lazy, expected, len(text))


@settings(max_examples=150, deadline=None)
@given(
    items=st.dictionaries(st.integers(1, 30), st.integers(1, 4), max_size=10),
    lo=st.integers(0, 31),
    width=st.integers(0, 31),
)
def test_ranked_level_equals_trying_each_rank_in_order(
    items: dict[int, int], lo: int, width: int
) -> None:
    positions = sorted(items)
    level = ranked("x" * 40, positions, [items[p] for p in positions])
    hi = lo + width
    per_rank = level.ranks()
    expected = -1
    for plain in per_rank:
        expected = plain.last_in(lo, hi)
        if expected >= 0:
            break
    assert level.last_in(lo, hi) == expected
    assert level.first_in(lo, hi) == naive_queries(positions, lo, hi, lo)[1]
    assert level.first_after(lo) == naive_queries(positions, lo, hi, lo)[2]
    assert sorted(b for plain in per_rank for b in plain.boundaries()) == positions


def test_point_lists_are_computed_lazily() -> None:
    calls = []

    def make() -> list[int]:
        calls.append(1)
        return [3, 5]

    level = points("x" * 10, make)
    assert calls == []
    assert level.last_in(0, 4) == 3 and level.first_after(3) == 5
    assert calls == [1]


MARKDOWN_AND_CODE = st.lists(
    st.sampled_from(
        ["# T\n", "## U\n", "word ", "end. ", "\n", "\n\n", "```\nx = 1\n```\n",
         "| a |\n|---|\n", "def f():\n", "    pass\n", "\nclass C:\n", "\r\n"]
    ),
    max_size=30,
).map("".join)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(text=MARKDOWN_AND_CODE, size=st.integers(2, 40), data=st.data())
def test_overlap_levels_given_for_speed_change_nothing(
    text: str, size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(1, size - 1), label="overlap")
    levels, covering = markdown_levels(text, parse_markdown(text), size)
    assert pack(text, levels, size, overlap, overlap_levels=covering) == pack(
        text, levels, size, overlap
    )
    code = code_levels(text)
    assert pack(text, code, size, overlap, overlap_levels=code[3:5]) == pack(
        text, code, size, overlap
    )
    union = set().union(*(lv.boundaries() for lv in levels[:-1]))
    assert union == set(covering[0].boundaries()) | set(covering[1].boundaries())


def reference_levels(text: str, separators: list[str]) -> list[tuple[set[int], bool]]:
    return [(literal_boundaries(text, sep), sep == "") for sep in separators]


@settings(max_examples=200, deadline=None)
@given(
    text=texts,
    separators=separator_lists,
    with_char=st.booleans(),
    size=st.integers(1, 25),
    data=st.data(),
)
def test_recursive_spans_equal_the_reference_packer(
    text: str, separators: list[str], with_char: bool, size: int, data: st.DataObject
) -> None:
    seps = [*separators, ""] if with_char else separators
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    expected = reference_pack(text, reference_levels(text, seps), size, overlap)
    fast = recursive_spans(text, size, overlap, seps)
    measured = recursive_spans(text, size, overlap, seps, length=len)
    assert fast == expected
    assert measured == expected
    check_spans(text, fast, size, overlap)


@settings(max_examples=100, deadline=None)
@given(text=texts, separators=separator_lists, size=st.integers(1, 6), data=st.data())
def test_recursive_spans_in_words_equal_the_reference_packer(
    text: str, separators: list[str], size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    seps = [*separators, ""]
    expected = reference_pack(text, reference_levels(text, seps), size, overlap, count_words)
    got = recursive_spans(text, size, overlap, seps, length=count_words)
    assert got == expected
    check_spans(text, got, size, overlap, count_words)


@settings(max_examples=100, deadline=None)
@given(text=texts, size=st.integers(1, 20), data=st.data())
def test_regex_separators_equal_literal_ones(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    literal = recursive_spans(text, size, overlap, ["\n\n", "\n", " ", ""])
    # lookaheads find overlapping occurrences, like the literal search does
    regex = recursive_spans(
        text, size, overlap, [r"(?<=\n)\n", r"\n", " ", ""], is_separator_regex=True
    )
    assert regex == literal


def test_oversized_atom_runs_to_the_next_boundary_and_is_flagged() -> None:
    text = "short\n\n" + "x" * 30 + "\n\ntail"
    spans = recursive_spans(text, 10, 0, ["\n\n"])
    assert [(text[a:b], big) for a, b, big in spans] == [
        ("short\n\n", False),
        ("x" * 30 + "\n\n", True),
        ("tail", False),
    ]


def test_overlap_starts_at_the_earliest_separator_within_the_overlap() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta"
    spans = recursive_spans(text, 20, 8, [" ", ""])
    chunks = [text[a:b] for a, b, _ in spans]
    assert chunks[0] == "alpha beta gamma "
    assert chunks[1].startswith("gamma ")  # "gamma " is 6 <= 8; "beta gamma " would be 11
    check_spans(text, spans, 20, 8)


def test_overlap_is_skipped_rather_than_starting_mid_word() -> None:
    text = "x" * 40
    spans = recursive_spans(text, 10, 3, [" ", ""])  # characters only: no separator in tails
    assert [(a, b) for a, b, _ in spans] == [(0, 10), (10, 20), (20, 30), (30, 40)]
    only_chars = recursive_spans(text, 10, 3, [""])
    assert [(a, b) for a, b, _ in only_chars][:2] == [(0, 10), (7, 17)]


def test_empty_text_gives_no_spans() -> None:
    assert recursive_spans("", 5, 0) == []
    assert pack("", [], 5) == []


@pytest.mark.parametrize("size", [1, 2, 7])
def test_every_chunk_is_within_the_limit_with_characters(size: int) -> None:
    text = "The quick brown fox.\n\nJumps over\nthe lazy dog! " * 5
    spans = recursive_spans(text, size, 0, ["\n\n", "\n", ". ", " ", ""])
    check_spans(text, spans, size, 0)
    assert not any(big for _, _, big in spans)
    assert bisect_left([1], 1) == 0 and bisect_right([1], 1) == 1  # sanity of the helpers
