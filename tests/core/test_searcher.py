"""``ragloom.search`` / ``Searcher`` / ``ragloom.evaluate``: the command line's search and
evaluation from Python, over a LanceDB index of the sample documents."""

from __future__ import annotations

from pathlib import Path

import pytest
import ragloom
from ragloom import ConfigurationError
from support.sample_index import SAMPLE_DOCS, build_sample_index

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

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


REVERSE_PLUGIN = '''
from ragloom.plugins.hookspecs import hookimpl
from ragloom.reranking import Reranker


class Reverse(Reranker):
    """The fused passages, last first, at most ``keep``."""

    step_id = "rr-reverse/reverse"

    def __init__(self, keep: int = 100) -> None:
        self.keep = keep

    def config(self):
        return {"keep": self.keep}

    def rerank(self, question, passages, top_k):
        return passages[::-1][: min(top_k, self.keep)]


@hookimpl
def ragloom_register(register):
    register("reranker", "reverse", Reverse)
'''


@pytest.fixture
def reverse_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A third-party distribution whose hook registers the reranker ``reverse``."""
    site = tmp_path / "site"
    info = site / "rr_reverse-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "rr_reverse.py").write_text(REVERSE_PLUGIN, encoding="utf-8")
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: rr-reverse\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[ragloom.plugins]\nrr-reverse = rr_reverse\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    return site


def test_a_reranker_a_plugin_registers_is_used_by_search_ask_and_routes_files(
    index, reverse_plugin, tmp_path, capsys
) -> None:
    import json

    import yaml
    from ragloom.cli import main

    with ragloom.Searcher(index=str(index), mode="text", top_k=3) as searcher:
        plain = [p.chunk_id for p in searcher.search(QUESTION).passages]
    with ragloom.Searcher(index=str(index), mode="text", top_k=3, rerank="reverse") as searcher:
        reranked = searcher.search(QUESTION).passages
    # the reranker chose the last of every passage found (more than the three kept)
    assert len(reranked) == 3 and [p.chunk_id for p in reranked] != plain
    scores = [p.score for p in reranked]
    assert scores == sorted(scores)  # the fused scores, in the reranker's order

    args = ["search", QUESTION, "--index", str(index), "--mode", "text", "-k", "3", "--json"]
    assert main([*args, "--rerank", "reverse", "--rerank-option", "keep=2"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [p["chunk_id"] for p in shown["passages"]] == [p.chunk_id for p in reranked][:2]
    assert main(["ask", *args[1:], "--rerank", "reverse"]) == 0
    answered = json.loads(capsys.readouterr().out)
    assert [p["chunk_id"] for p in answered["retrieval"]["passages"]] == [
        p.chunk_id for p in reranked
    ]

    routes = yaml.safe_load((EXAMPLES / "routes.yaml").read_text(encoding="utf-8"))
    routes["rerank"] = {"name": "reverse", "params": {"keep": 1}}
    path = tmp_path / "routes.yaml"
    path.write_text(yaml.safe_dump(routes), encoding="utf-8")
    with ragloom.Searcher(index=str(index), mode="text", routes=str(path)) as searcher:
        assert len(searcher.search(QUESTION).passages) == 1
    # the settings win over the file
    with ragloom.Searcher(index=str(index), mode="text", routes=str(path),
                          rerank_options={"keep": 2}) as searcher:
        assert len(searcher.search(QUESTION).passages) == 2

    for bad, phrase in (
        (["--rerank", "revers"], "'reverse'"),
        (["--rerank", "reverse", "--rerank-option", "keep"], "is not KEY=VALUE"),
        (["--rerank", "reverse", "--rerank-option", "depth=2"], "depth"),
        (["--rerank-option", "keep=2"], "name the reranker"),
        (["--config", str(path), "--rerank", "reverse"], "--rerank"),
    ):
        assert main([*args, *bad]) == 2, bad
        err = capsys.readouterr().err
        assert phrase in err and "Traceback" not in err, (bad, err)
