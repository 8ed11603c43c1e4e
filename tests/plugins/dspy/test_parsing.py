"""Reading sub-queries from a model's answer, and cleaning them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom_dspy import parse_sub_queries
from ragloom_dspy._parsing import clean_sub_queries


@pytest.mark.parametrize(
    "raw",
    [
        '["solar costs Germany", "solar costs France"]',
        '```json\n["solar costs Germany", "solar costs France"]\n```',
        '```\n["solar costs Germany", "solar costs France"]\n```',
        'Here are the [2] sub-queries:\n["solar costs Germany", "solar costs France"]\nDone.',
        "['solar costs Germany', 'solar costs France']",
        "Sure! ```python\n[\"solar costs Germany\", 'solar costs France']\n``` hope it helps",
        '{"sub_queries": ["solar costs Germany", "solar costs France"]}',
        '"[\\"solar costs Germany\\", \\"solar costs France\\"]"',
        ["solar costs Germany", "solar costs France"],
        ("solar costs Germany", "solar costs France"),
    ],
)
def test_readable_answers(raw: object) -> None:
    parsed = parse_sub_queries(raw)
    assert parsed.ok
    assert parsed.items == ["solar costs Germany", "solar costs France"]


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("", "empty output"),
        (None, "empty output"),
        ("no list here at all", "invalid JSON"),
        ('["unterminated", "list"', "invalid JSON"),
        ('{"answer": "x"}', "not a list (got a JSON object)"),
        ('"just a string"', "not a list (got str)"),
        ("42", "not a list (got int)"),
        ("[1, 2]", "non-string item at index 0 (int)"),
        ('["ok", null]', "non-string item at index 1 (NoneType)"),
        (["ok", ["nested"]], "non-string item at index 1 (list)"),
        ({"x": 1}, "not a list (got a JSON object)"),
    ],
)
def test_unreadable_answers_say_why(raw: object, error: str) -> None:
    parsed = parse_sub_queries(raw)
    assert not parsed.ok
    assert parsed.items is None
    assert parsed.error is not None and parsed.error.startswith(error)


def test_first_list_of_strings_wins_over_earlier_brackets() -> None:
    raw = 'Step [1]: think. Answer: ["a b", "c d"] and also ["e"]'
    assert parse_sub_queries(raw).items == ["a b", "c d"]


def test_pathological_text_is_bounded() -> None:
    raw = "[" * 5000 + "]" * 5000
    assert not parse_sub_queries(raw).ok


items_strategy = st.lists(st.text(max_size=30), max_size=8)


@settings(max_examples=150, deadline=None)
@given(items_strategy, st.sampled_from(["{}", "```json\n{}\n```", "Sure, here:\n{}\nThanks."]))
def test_json_round_trip_in_any_wrapping(items: list[str], wrapping: str) -> None:
    raw = wrapping.format(json.dumps(items))
    assert parse_sub_queries(raw).items == items


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=80), st.binary(max_size=40).map(repr)))
def test_never_raises(raw: str) -> None:
    parsed = parse_sub_queries(raw)
    assert parsed.ok != (parsed.error is not None)


def test_clean_strips_and_drops_empty_and_duplicates_keeping_order() -> None:
    assert clean_sub_queries(
        ["  solar Germany ", "", "   ", "wind France", "Solar   germany", "solar Germany", "x"]
    ) == ["solar Germany", "wind France", "x"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=12))
def test_clean_output_is_stripped_unique_and_ordered(items: list[str]) -> None:
    cleaned = clean_sub_queries(items)
    assert all(c and c == c.strip() for c in cleaned)
    keys = [" ".join(c.split()).casefold() for c in cleaned]
    assert len(keys) == len(set(keys))
    stripped = [i.strip() for i in items]
    positions = [stripped.index(c) for c in cleaned]
    assert positions == sorted(positions)
