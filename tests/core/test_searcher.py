"""``ragloom.search`` / ``Searcher`` / ``ragloom.evaluate``: the command line's search and
evaluation from Python, over a LanceDB index of the sample documents."""

from __future__ import annotations

from pathlib import Path

import pytest
import ragloom
from ragloom import ConfigurationError
from support.sample_index import SAMPLE_DOCS, build_sample_index

pytest.importorskip("ragloom_lancedb")
pytest.importorskip("ragloom_semantic")
pytest.importorskip("ragloom_rules")

QUESTION = "How do I clear the cache and how do I write a plugin?"


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    return build_sample_index(tmp_path_factory.mktemp("searcher") / "index")


def test_search_in_one_call_with_the_cli_defaults(index) -> None:
    result = ragloom.search(QUESTION, index=str(index))
    assert result.query == QUESTION
    assert len(result.sub_queries) == 2
    assert 0 < len(result.passages) <= ragloom.searcher.DEFAULT_TOP_K
    for passage in result.passages:
        text = (SAMPLE_DOCS / passage.document_id).read_text(encoding="utf-8")
        if passage.document_id.endswith((".md", ".rst", ".txt", ".py")):
            assert text[passage.start : passage.end] == passage.content


def test_a_searcher_keeps_the_index_open_for_many(index) -> None:
    with ragloom.Searcher(index=str(index), mode="text", top_k=3) as searcher:
        first = searcher.search(QUESTION)
        again = searcher.search(QUESTION)
        both = searcher.search_many([QUESTION, "What is in the release notes?"])
        assert "guides/caching.md" in searcher.document_ids()
    assert [p.chunk_id for p in first.passages] == [p.chunk_id for p in again.passages]
    assert len(first.passages) <= 3 and len(both) == 2


def test_whole_question_and_bad_settings(index) -> None:
    whole = ragloom.search(QUESTION, index=str(index), decomposer="none", mode="text")
    assert whole.sub_queries == [QUESTION]
    with pytest.raises(ConfigurationError, match="no index at"):
        ragloom.search(QUESTION, index=str(index.parent / "absent"))
    with pytest.raises(ValueError, match="top_k"):
        ragloom.search(QUESTION, index=str(index), top_k=0)
    with pytest.raises(ConfigurationError, match="these choose the search without a file"):
        ragloom.Searcher(config="pipeline.toml", mode="text")


def test_evaluate_returns_the_report_as_objects(index) -> None:
    questions = [
        {"id": "cache", "question": "How do I clear the cache?",
         "expected": ["guides/caching.md"]},
        {"id": "both", "question": QUESTION,
         "expected": [{"facet": 1, "document": "guides/caching.md"},
                      {"facet": 2, "document": "plugins.rst"},
                      {"facet": 2, "document": "faq.html"}]},
    ]
    report = ragloom.evaluate(
        questions, str(index), setups={"text": {"mode": "text"}, "whole": {"decomposer": "none"}},
        ks=(1, 5),
    )
    assert [s.name for s in report.setups] == ["text", "whole"]
    text = report.setup("text")
    assert text.settings["top_k"] == 5 and text.overall.questions == 2
    assert text.overall.facets == 3
    assert set(text.by_kind) == {"simple", "compound"}
    outcome = text.questions[0]
    assert outcome.facets[0].rank == 1 and outcome.facets[0].document_id == "guides/caching.md"
    assert 0.0 <= text.overall.recall(1) <= text.overall.recall(5) <= 1.0
    from ragloom.evaluation import render_html

    assert render_html(report).startswith("<!doctype html>")
    with pytest.raises(ConfigurationError, match="ks must be"):
        ragloom.evaluate(questions, str(index), ks=(0,))
