"""``ragloom search`` through the real entry point, over a LanceDB index of the sample documents
(built once per module by the ingest library, with the bundled embedding model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_support import EXAMPLES, SAMPLE_DOCS
from support.sample_index import build_sample_index

# one pytest-xdist worker runs the whole module (--dist loadgroup):
# the index every test searches is built once
pytestmark = [pytest.mark.usefixtures("needs_rules"), pytest.mark.xdist_group("cli-search")]

pytest.importorskip("ragloom_lancedb")
pytest.importorskip("ragloom_semantic")
pytest.importorskip("ragloom_text")

QUESTION = "How do I clear the cache and how do I write a plugin?"

#: The documented keys of one ``--json`` line (docs/cli.md).
RESULT_KEYS = {"query", "sub_queries", "routing_plan", "passages", "failures"}
PLAN_KEYS = {
    "sub_query", "route", "score", "fallback_reason", "runner_up", "runner_up_score",
    "collections", "retrieval", "note", "focus",
}
PASSAGE_KEYS = {
    "chunk_id", "document_id", "start", "end", "content", "metadata", "score", "found_by",
}
HIT_KEYS = {"sub_query", "route", "rank", "score", "collections"}
FAILURE_KEYS = {"sub_query", "route", "error"}


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    return build_sample_index(tmp_path_factory.mktemp("cli-search") / "index")


def source_text(document_id: str) -> str:
    return (SAMPLE_DOCS / document_id).read_text(encoding="utf-8")


def test_json_schema_plan_and_fused_passages(cli, index) -> None:
    proc = cli(
        "search", QUESTION, "What is in the release notes?", "--routes",
        EXAMPLES / "routes.yaml", "--index", index, "-k", "4", "--json",
    )
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    for result in (first, second):
        assert set(result) == RESULT_KEYS
        assert result["failures"] == []
        assert len(result["passages"]) <= 4
        for route in result["routing_plan"]:
            assert set(route) == PLAN_KEYS
        scores = [p["score"] for p in result["passages"]]
        assert scores == sorted(scores, reverse=True)
        for passage in result["passages"]:
            assert set(passage) == PASSAGE_KEYS
            assert passage["found_by"]
            for hit in passage["found_by"]:
                assert set(hit) == HIT_KEYS
                assert hit["rank"] >= 1
                if hit["route"] == "(whole question)":  # a split question is searched whole too
                    assert hit["sub_query"] == result["query"]
                else:
                    assert hit["sub_query"] in result["sub_queries"]
            assert isinstance(passage["metadata"], dict) and passage["metadata"]["source"]
            if passage["start"] is not None and not passage["document_id"].endswith(".html"):
                text = source_text(passage["document_id"])
                assert text[passage["start"] : passage["end"]] == passage["content"]
    assert first["query"] == QUESTION
    assert first["sub_queries"] == ["How do I clear the cache?", "How do I write a plugin?"]
    assert [r["route"] for r in first["routing_plan"]] == ["caching", "plugins"]
    documents = {p["document_id"] for p in first["passages"]}
    assert "guides/caching.md" in documents
    assert {"plugins.rst", "faq.html"} & documents
    routes_found = {h["route"] for p in first["passages"] for h in p["found_by"]}
    assert {"caching", "plugins"} <= routes_found <= {"caching", "plugins", "(whole question)"}
    assert second["query"] == "What is in the release notes?"


def test_table_shows_plan_sources_and_offsets(cli, index) -> None:
    proc = cli("search", QUESTION, "--routes", EXAMPLES / "routes.yaml", "--index", index)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"Q: {QUESTION}\n")
    assert "SUB-QUERY" in out and "caching" in out and "plugins" in out
    assert "guides/caching.md [" in out and "#1 for 'How do I clear the cache?'" in out


def test_no_match_and_an_empty_index(cli, index, tmp_path) -> None:
    proc = cli("search", "zyxwvut qqqqq", "--index", index, "--mode", "text", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["passages"] == [] and result["failures"] == []
    empty = tmp_path / "empty"
    shutil.copytree(index, empty)
    assert cli("index", "clear", "--index", empty).returncode == 0
    proc = cli("search", QUESTION, "--index", empty, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["passages"] == [] and result["failures"] == []
    assert len(result["routing_plan"]) == 2
    plain = cli("search", QUESTION, "--index", empty)
    assert plain.returncode == 0 and "(no passages found)" in plain.stdout


def test_usage_errors_exit_2_with_a_clear_message(cli, index, tmp_path) -> None:
    missing = cli("search", QUESTION, "--index", tmp_path / "nowhere")
    assert missing.returncode == 2
    assert "no index at" in missing.stderr and "ragloom ingest" in missing.stderr
    assert "Traceback" not in missing.stderr
    blank = cli("search", "   ", "--index", index)
    assert blank.returncode == 2 and "blank" in blank.stderr
    some_blank = cli("search", QUESTION, "", "--index", index)
    assert some_blank.returncode == 2 and "QUESTION 2 is blank" in some_blank.stderr


SEARCH_FILE = """
name = "search"

[query]
decomposer = "ragloom-rules:heuristic"

[query.router]
name = "ragloom-rules:keyword"

[query.router.params]
default_route = "general"

[[query.router.params.routes]]
name = "caching"
keywords = ["cache"]
retrieve = {{ retriever = "store", where = {{ format = "rst" }}, top_k = 2, weight = 2.0 }}

[[query.router.params.routes]]
name = "plugins"
keywords = ["plugin"]

[[query.router.params.routes]]
name = "general"

[retrieval]
store = {{ name = "lancedb", params = {{ path = "{index}" }} }}
embedder = "model2vec"
top_k = 6
"""


def test_config_file_routes_name_their_filters(cli, index, workdir) -> None:
    pipeline = workdir / "search.toml"
    pipeline.write_text(SEARCH_FILE.format(index=index), encoding="utf-8")
    proc = cli("search", QUESTION, "--config", pipeline, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert [r["route"] for r in result["routing_plan"]] == ["caching", "plugins"]
    assert 0 < len(result["passages"]) <= 6
    from_caching = [
        p for p in result["passages"] if any(h["route"] == "caching" for h in p["found_by"])
    ]
    assert 0 < len(from_caching) <= 2
    assert all(p["metadata"]["format"] == "rst" for p in from_caching)
    conflict = cli("search", QUESTION, "--config", pipeline, "-k", "3")
    assert conflict.returncode == 2 and "--top-k" in conflict.stderr


def test_a_question_whose_every_sub_query_fails_exits_1(cli, index, workdir) -> None:
    (workdir / "failing.py").write_text(
        "from ragloom.retrieval import Retriever\n\n"
        "class Failing(Retriever):\n"
        "    step_id = 'test/failing'\n\n"
        "    def __init__(self, store=None):\n"
        "        self.store = store\n\n"
        "    def retrieve(self, query, *, top_k=None, where=None):\n"
        "        raise ConnectionError('the search service is down')\n",
        encoding="utf-8",
    )
    pipeline = workdir / "failing.toml"
    retriever = '[retrieval.retriever]\nimport = "failing:Failing"\n'
    pipeline.write_text(
        SEARCH_FILE.format(index=index) + retriever,
        encoding="utf-8",
    )
    refused = cli("search", QUESTION, "--config", pipeline)
    assert refused.returncode == 2 and "allow_imports" in refused.stderr
    proc = cli("search", "How do I write a plugin?", "--config", pipeline, "--allow-imports",
               "--json")
    assert proc.returncode == 1, proc.stderr
    (line,) = proc.stdout.splitlines()
    failed = json.loads(line)
    assert set(failed) == {"query", "error"}
    assert failed["query"] == "How do I write a plugin?"
    assert "RetrievalFailedError" in failed["error"] and "search service is down" in failed["error"]
    # one of two sub-queries failing is reported in the answer, not an error
    proc = cli("search", QUESTION, "--config", pipeline, "--allow-imports", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    # the plugins route's retriever is down, and so is the default one the whole question
    # is searched with
    assert [f["route"] for f in result["failures"]] == ["plugins", "(whole question)"]
    assert set(result["failures"][0]) == FAILURE_KEYS
    assert result["passages"] and all(
        h["route"] in ("caching", "(whole question)")
        for p in result["passages"] for h in p["found_by"]
    )


def test_a_routes_file_names_filters_and_weights(cli, index, workdir) -> None:
    routes = workdir / "routes.yaml"
    routes.write_text(
        "default_route: general\n"
        "routes:\n"
        "  - name: caching\n"
        "    keywords: [cache]\n"
        "    retrieve: {where: {format: rst}, top_k: 1, weight: 2.0}\n"
        "  - name: plugins\n"
        "    keywords: [plugin]\n"
        "  - name: general\n",
        encoding="utf-8",
    )
    proc = cli("search", QUESTION, "--routes", routes, "--index", index, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    cached = [p for p in result["passages"] if any(h["route"] == "caching" for h in p["found_by"])]
    assert len(cached) == 1 and cached[0]["metadata"]["format"] == "rst"
    assert result["passages"][0] == cached[0]  # weight 2: first
    weights = {"caching": 2.0, "plugins": 1.0, "(whole question)": 1.0}
    k, consensus = 5, 0.2  # the defaults: each passage's best gain, plus a fifth of the others
    best = (2.0 + consensus * 2.0) / (k + 1)  # every list ranking the passage first
    for passage in result["passages"]:
        gains = [weights[h["route"]] / (k + h["rank"]) for h in passage["found_by"]]
        expected = max(gains) + consensus * (sum(gains) - max(gains))
        assert passage["score"] == pytest.approx(expected / best, rel=1e-12)
    assert [h["rank"] for h in cached[0]["found_by"] if h["route"] == "caching"] == [1]
