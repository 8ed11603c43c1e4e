"""Searching a real index: LanceDB in a temp dir holding the sample documents (ingested by
the ingest library), the bundled model2vec model, the rules decomposer and keyword router."""

from __future__ import annotations

from pathlib import Path

import pytest
from ragloom.multi_retrieval import MultiQueryRetrievalPipeline
from ragloom.query import Router
from ragloom.retrieval import Retriever

lancedb_store = pytest.importorskip("ragloom_lancedb")
semantic = pytest.importorskip("ragloom_semantic")
rules = pytest.importorskip("ragloom_rules")

SAMPLE_DOCS = Path(__file__).resolve().parents[3] / "examples" / "sample-docs"


# one pytest-xdist worker runs the whole module (--dist loadgroup):
# the index is built once
pytestmark = pytest.mark.xdist_group("lancedb-search")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from ragloom.ingest import ingest

    path = tmp_path_factory.mktemp("search") / "index"
    store = lancedb_store.LanceDBStore(path)
    report = ingest([SAMPLE_DOCS], store=store, cache=False)
    store.close()
    assert report.ok and report.indexed == report.documents > 0, report.to_dict()
    return path


@pytest.fixture
def real(index):
    from ragloom.retrieval import StoreRetriever

    store = lancedb_store.LanceDBStore(index)
    embedder = semantic.Model2VecEmbedder()
    yield store, embedder, StoreRetriever(store, embedder, top_k=5)
    store.close()


def keyword_router(retrieve: dict) -> Router:
    routes = [
        {"name": "caching", "keywords": ["cache", "caching"], "retrieve": retrieve},
        {"name": "plugins", "keywords": ["plugin", "plugins"]},
        {"name": "general"},
    ]
    return rules.KeywordRouter(routes, default_route="general")


def test_a_compound_question_over_a_real_index(real) -> None:
    store, embedder, retriever = real
    searched = MultiQueryRetrievalPipeline(
        rules.HeuristicDecomposer(), keyword_router({}), retriever, top_k=5
    )
    result = searched.search_sync("How do I clear the cache and how do I write a plugin?")
    assert [r.route for r in result.routing_plan] == ["caching", "plugins"]
    documents = [p.document_id for p in result.passages]
    assert "guides/caching.md" in documents and "plugins.rst" in documents
    texts = {}
    for passage in result.passages:
        if passage.start is not None and not passage.document_id.endswith(".html"):
            if passage.document_id not in texts:
                texts[passage.document_id] = (SAMPLE_DOCS / passage.document_id).read_text()
            assert texts[passage.document_id][passage.start : passage.end] == passage.content
        assert passage.found_by and passage.chunk_id.startswith(passage.document_id)
    scores = [p.score for p in result.passages]
    assert scores == sorted(scores, reverse=True)


def test_a_route_searches_only_its_documents(real) -> None:
    store, embedder, retriever = real
    only_rst = {"where": {"format": "rst"}, "top_k": 3}
    searched = MultiQueryRetrievalPipeline(
        rules.HeuristicDecomposer(), keyword_router(only_rst), retriever, top_k=10
    )
    result = searched.search_sync("How do I clear the cache and how do I write a plugin?")
    from_caching = [
        p for p in result.passages if any(h.route == "caching" for h in p.found_by)
    ]
    assert from_caching and all(p.metadata["format"] == "rst" for p in from_caching)
    assert len(from_caching) <= 3


def test_a_real_failing_route_and_an_empty_index(real, tmp_path) -> None:
    from ragloom.retrieval import StoreRetriever

    store, embedder, retriever = real
    routes = [
        {"name": "caching", "keywords": ["cache"], "retrieve": {"retriever": "broken"}},
        {"name": "general"},
    ]
    searched = MultiQueryRetrievalPipeline(
        rules.HeuristicDecomposer(), rules.KeywordRouter(routes, default_route="general"),
        retriever, retrievers={"broken": Broken()},
    )
    result = searched.search_sync("How do I clear the cache and how do I write a plugin?")
    assert [f.route for f in result.failures] == ["caching"]
    assert result.passages and all(
        h.route in ("general", "(whole question)") for p in result.passages for h in p.found_by
    )
    with lancedb_store.LanceDBStore(tmp_path / "empty") as empty:
        nothing = MultiQueryRetrievalPipeline(
            rules.HeuristicDecomposer(), keyword_router({}), StoreRetriever(empty, embedder)
        ).search_sync("How do I clear the cache and how do I write a plugin?")
        assert nothing.passages == [] and nothing.failures == []


class Broken(Retriever):
    step_id = "test/broken"

    def retrieve(self, query, *, top_k=None, where=None):
        raise ConnectionError(f"index unreachable for {query!r}")


def test_route_settings_flow_through_both_routers_and_their_files(real, tmp_path) -> None:
    """``retrieve`` settings written in a route file reach the search, for the keyword and the
    semantic router alike, and survive the router's config()."""
    store, embedder, retriever = real
    retrieve = "    retrieve: {where: {format: rst}, top_k: 2, weight: 3.0}\n"
    keyword_file = tmp_path / "keyword.yaml"
    keyword_file.write_text(
        "default_route: general\nroutes:\n  - name: caching\n    keywords: [cache]\n"
        + retrieve + "  - name: general\n",
        encoding="utf-8",
    )
    semantic_file = tmp_path / "semantic.yaml"
    semantic_file.write_text(
        "default_route: general\nroutes:\n  - name: caching\n"
        "    examples: ['How do I clear the cache?', 'Where is the cache file?']\n"
        + retrieve + "  - name: general\n    examples: [hello there]\n",
        encoding="utf-8",
    )
    keyword = rules.KeywordRouter.from_file(keyword_file)
    semantic_router = semantic.SemanticRouter(semantic_file)
    for router in (keyword, semantic_router):
        rebuilt = type(router)(**router.config())
        for built in (router, rebuilt):
            searched = MultiQueryRetrievalPipeline(
                rules.HeuristicDecomposer(), built, retriever, top_k=10
            )
            spec = searched.routes["caching"]
            assert (spec.where, spec.top_k, spec.weight) == ({"format": "rst"}, 2, 3.0)
            result = searched.search_sync("How do I clear the cache?")
            assert result.routing_plan[0].route == "caching"
            assert 0 < len(result.passages) <= 2
            assert all(p.metadata["format"] == "rst" for p in result.passages)
            # first in the only list (the question is not split): the best score there is
            assert result.passages[0].score == 1.0
            assert result.passages[0].found_by[0].rank == 1
