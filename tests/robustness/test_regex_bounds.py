"""User regular expressions (separators with ``is_separator_regex``, keyword route patterns)
cannot hang a run: a catastrophically backtracking pattern stops at its time limit with a
message naming the pattern; normal patterns give exactly what ``re`` gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom_rules._keywords import is_quadratic_at_most
from ragloom_rules.router import KeywordRouter
from ragloom_text import RecursiveCharacterTextSplitter

from .conftest import check, pipeline_file

HOPELESS = "(a|aa)+$"  # exponential on a run of "a" that does not end the text


def test_a_catastrophic_separator_fails_its_document_only(rb, work: Path) -> None:
    (work / "docs" / "bad.txt").write_text("a" * 80 + "!", encoding="utf-8")
    spec = pipeline_file(
        work / "p.toml",
        f'chunker = "recursive"\nparams = {{ chunk_size = 20, separators = ["{HOPELESS}", ""],'
        " is_separator_regex = true }",
    )
    proc = rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache", "--json")
    check(proc, 1)
    (failure,) = json.loads(proc.stdout)["failures"]
    assert failure["source"] == "docs/bad.txt" and failure["kind"] == "PatternTimeoutError"
    assert f"separators[0] pattern '{HOPELESS}' took longer than" in failure["reason"]
    parents = {json.loads(line)["parent"] for line in (work / "out.jsonl").read_text().splitlines()}
    assert parents == {"a.md", "b.txt", "c.py"}


def test_the_classic_nested_quantifier_just_works(rb, work: Path) -> None:
    (work / "docs" / "aaa.txt").write_text("a" * 40 + "!", encoding="utf-8")
    spec = pipeline_file(
        work / "p.toml",
        'chunker = "recursive"\nparams = { chunk_size = 20, separators = ["(a+)+$", ""],'
        " is_separator_regex = true }",
    )
    check(rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache", "-q"), 0)


def test_a_catastrophic_route_pattern_falls_back_with_the_reason(rb, work: Path) -> None:
    routes = work / "routes.json"
    routes.write_text(json.dumps({
        "default_route": "general",
        "routes": [{"name": "aaa", "patterns": [HOPELESS]}, {"name": "general"}],
    }), encoding="utf-8")
    proc = rb("plan", "--routes", routes, "--json", "a" * 80 + "!")
    check(proc, 0)
    (route,) = json.loads(proc.stdout)["routing_plan"]
    assert route["route"] == "general"
    assert f"route 'aaa': pattern '{HOPELESS}' took longer than" in route["fallback_reason"]


SEPARATORS = [r"\n\n", r"[.!?]\s+", r"\s+", r"(?<=\.) ", r"\d+", r"(?m)^#", r"[,;]"]


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(alphabet="ab .!?,;\n#1", max_size=300),
    size=st.integers(min_value=1, max_value=40),
    sep=st.sampled_from(SEPARATORS),
)
def test_regex_separators_cut_where_re_matches(text: str, size: int, sep: str) -> None:
    chunker = RecursiveCharacterTextSplitter(
        chunk_size=size, separators=[sep, ""], is_separator_regex=True
    )
    chunks = chunker.chunk(text) if text else []
    assert "".join(c.content for c in chunks) == text
    ends = {m.end() for m in re.finditer(sep, text)}
    for chunk in chunks[:-1]:
        # Every cut is a match end of the pattern (as `re` finds them) or a forced cut at the
        # character level because no match end fit within the size.
        assert chunk.end in ends or len(chunk.content) == size


@pytest.mark.parametrize(
    ("pattern", "fast"),
    [(r"\b(19|20)\d{2}\b", True), (r"\$\s?\d+(?:\.\d{2})?", True), (r"(a+)+$", False),
     (HOPELESS, False), (r"(.*a){20}", False), (r"a*a*b", False), (r"(a)\1", False)],
)
def test_route_patterns_are_judged_fast_or_bounded(pattern: str, fast: bool) -> None:
    assert is_quadratic_at_most(pattern, re.IGNORECASE) is fast


@settings(max_examples=60, deadline=None)
@given(query=st.text(alphabet="ab 12$.x", max_size=60))
def test_route_patterns_match_as_re_does(query: str) -> None:
    patterns = [r"\d{4}", r"\$\s?\d+(?:\.\d{2})?", r"x\s+\d+", r"(?:ab)+\b"]
    router = KeywordRouter(
        [{"name": f"r{i}", "patterns": [p]} for i, p in enumerate(patterns)] + [{"name": "g"}],
        default_route="g", min_evidence=0,
    )
    expected = {f"r{i}" for i, p in enumerate(patterns) if re.search(p, query, re.I)}
    scores = router._index.raw_scores(query)  # noqa: SLF001 - the evidence behind a decision
    assert {name for name, score in scores.items() if score > 0} == expected
